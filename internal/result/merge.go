package result

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
)

// MergeOptions are what Merge needs beyond the parts' documents: the
// workload's own rules, since a merged run's metrics are its to make.
type MergeOptions struct {
	// AllowMissing merges the parts present, naming the others, where
	// Merge would refuse.
	AllowMissing bool
	// Summarize is the workload's Resummarizer (workload.Resummarizer.
	// Resummarize): the merged metrics, lines, extra and audit from the
	// merged figures.
	Summarize func(workload.Figures) (workload.Summary, error)
	// Info is the workload's declaration (metrics' order and defs).
	Info workload.Info
}

// partDoc is one part's document and the path it was read from.
type partDoc struct {
	*Document
	path string
}

// Merge makes one document of a split run's parts' own documents: the
// run's figures as one process would have measured them, with each
// part's in Parts.Members. It refuses, in one line, documents that are
// not parts of one run, a part given twice, and a missing part unless
// o.AllowMissing.
func Merge(docs []*Document, paths []string, o MergeOptions) (*Document, error) {
	if len(docs) == 0 {
		return nil, exitcode.Userf("merge: name the documents of a split run's parts")
	}
	if len(docs) != len(paths) {
		return nil, fmt.Errorf("merge: %d documents for %d paths", len(docs), len(paths))
	}
	parts, err := gather(docs, paths)
	if err != nil {
		return nil, err
	}
	of := parts[0].Part.Of
	missing := missingParts(parts, of)
	if len(missing) > 0 && !o.AllowMissing {
		return nil, exitcode.Userf("%s of %d %s missing (no document: it died, or was not collected); --allow-missing merges the others",
			partList(missing), of, plural(len(missing), "is", "are"))
	}
	if err := oneMarker(parts, len(missing) == 0); err != nil {
		return nil, err
	}
	return merge(parts, missing, o)
}

// gather checks that docs are parts of one run, each once and each true
// to itself, and returns them in the parts' order.
func gather(docs []*Document, paths []string) ([]partDoc, error) {
	var parts []partDoc
	for i, d := range docs {
		if d.Part == nil {
			return nil, exitcode.Userf("%s is not a part of a split run (no part section)", paths[i])
		}
		if d.Part.Index < 1 || d.Part.Index > d.Part.Of {
			return nil, exitcode.Userf("%s: part %d of %d is no part of a run", paths[i], d.Part.Index, d.Part.Of)
		}
		parts = append(parts, partDoc{d, paths[i]})
	}
	slices.SortStableFunc(parts, func(a, b partDoc) int { return a.Part.Index - b.Part.Index })
	if err := checkHashes(parts); err != nil {
		return nil, err
	}
	for _, p := range parts {
		if err := p.checkFigures(); err != nil {
			return nil, p.refuse(err)
		}
	}
	first := parts[0]
	for k, p := range parts[1:] {
		if err := sameRun(first, p); err != nil {
			return nil, err
		}
		if prev := parts[k]; prev.Part.Index == p.Part.Index {
			return nil, exitcode.Userf("part %d given twice: %s, %s", p.Part.Index, prev.path, p.path)
		}
	}
	return parts, nil
}

// sameRun refuses b unless it is a part of a's run, run the same way.
func sameRun(a, b partDoc) error {
	diffs := differences(a, b)
	if a.Part.RunID != b.Part.RunID {
		why := ""
		if len(diffs) > 0 {
			why = "; " + strings.Join(diffs, "; ")
		}
		return exitcode.Userf("%s and %s are from different runs: %s started %s, %s started %s%s",
			a.path, b.path, shortID(a.Part.RunID), a.StartedAt.Format("15:04:05"),
			shortID(b.Part.RunID), b.StartedAt.Format("15:04:05"), why)
	}
	if len(diffs) > 0 {
		return exitcode.Userf("%s and %s are parts of one run that differ: %s", a.path, b.path, strings.Join(diffs, "; "))
	}
	return nil
}

// differences names what differs between two parts that must agree.
func differences(a, b partDoc) []string {
	var out []string
	differ := func(what string, x, y any) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %v in part %d, %v in part %d", what, x, a.Part.Index, y, b.Part.Index))
		}
	}
	differ("workload", a.Workload, b.Workload)
	differ("part count", a.Part.Of, b.Part.Of)
	differ("schema version", a.SchemaVersion, b.SchemaVersion)
	differ("tool", a.Tool, b.Tool)
	differ("target", a.Target.Server(), b.Target.Server())
	differ("transaction types", strings.Join(a.SeriesTypes, ", "), strings.Join(b.SeriesTypes, ", "))
	differ("primary metric", a.PrimaryMetric, b.PrimaryMetric)
	differ("primary transaction", a.PrimaryTx, b.PrimaryTx)
	sa, sb := a.Part.Schedule, b.Part.Schedule
	if !sa.Start.Equal(sb.Start) || !sa.Open.Equal(sb.Open) || !sa.Close.Equal(sb.Close) || sa.HoldMs != sb.HoldMs {
		differ("schedule", scheduleString(sa), scheduleString(sb))
	}
	// Key by key, whatever the hashes say: each part's hash was checked
	// against its own configuration, and the configurations against each
	// other here.
	configChanges(a, b, func(key, va, vb string) { differ(key, va, vb) })
	return out
}

// configChanges calls each with every key of the configurations of a and
// b, and of what they agreed on beyond them, whose values differ, sorted,
// and each side's value ("none" where it lacks the key).
func configChanges(a, b partDoc, each func(key, va, vb string)) {
	for _, m := range [][2]map[string]any{{a.Config, b.Config}, {a.Part.Agreed, b.Part.Agreed}} {
		fa, fb := flatConfig(m[0]), flatConfig(m[1])
		for _, k := range configDiff(fa, fb) {
			each(k, cmp.Or(fa[k], "none"), cmp.Or(fb[k], "none"))
		}
	}
}

// refuse is err, a finding of the part's self-check, as merge's one line.
func (p partDoc) refuse(err error) error {
	return exitcode.Userf("%s (part %d): %v", p.path, p.Part.Index, err)
}

// checkHashes refuses a part whose configuration no longer hashes to
// what the parts agreed on, naming the keys edited where another part's
// still does, and a part that kept nothing to hash.
func checkHashes(parts []partDoc) error {
	var edited []partDoc
	var intact *partDoc
	for i, p := range parts {
		if p.Part.Agreed == nil {
			return p.refuse(errors.New("part.agreed is missing, so its configuration cannot be checked: run the parts again with this dbrig"))
		}
		if p.checkConfigHash() != nil {
			edited = append(edited, p)
		} else if intact == nil {
			intact = &parts[i]
		}
	}
	if len(edited) == 0 {
		return nil
	}
	p := edited[0]
	var keys []string
	if intact != nil {
		configChanges(p, *intact, func(key, vp, vi string) {
			keys = append(keys, fmt.Sprintf("%s %s where part %d has %s", key, vp, intact.Part.Index, vi))
		})
	}
	if len(keys) == 0 {
		return p.refuse(p.checkConfigHash())
	}
	return p.refuse(fmt.Errorf("%s: the configuration was edited after the run, and no longer hashes to part.config_sha256",
		strings.Join(keys, ", ")))
}

// oneMarker refuses parts of which more than one claims to have taken
// the database's marks, or, all of them present, none: the run's leader
// takes them, and only it.
func oneMarker(parts []partDoc, complete bool) error {
	var markers []partDoc
	for _, p := range parts {
		if p.Part.Marker {
			markers = append(markers, p)
		}
	}
	const why = "the run's leader takes the database's marks, and no other part"
	switch {
	case len(markers) > 1:
		a, b := markers[0], markers[1]
		return exitcode.Userf("%s (part %d) and %s (part %d) both claim the database's marks (part.marker): %s",
			a.path, a.Part.Index, b.path, b.Part.Index, why)
	case len(markers) == 0 && complete:
		return exitcode.Userf("none of the %d parts claims the database's marks (part.marker): %s", len(parts), why)
	}
	return nil
}

// scheduleString is a schedule as a refusal names it.
func scheduleString(s PartSchedule) string {
	const at = "15:04:05.000"
	return fmt.Sprintf("start %s, open %s, close %s, hold %g ms", s.Start.UTC().Format(at), s.Open.UTC().Format(at), s.Close.UTC().Format(at), s.HoldMs)
}

// missingParts lists the parts of of that parts lacks.
func missingParts(parts []partDoc, of int) []int {
	var missing []int
	for i := 1; i <= of; i++ {
		if !slices.ContainsFunc(parts, func(p partDoc) bool { return p.Part.Index == i }) {
			missing = append(missing, i)
		}
	}
	return missing
}

// partList names parts as a line does: "part 3", "parts 1, 3", "parts 1–3".
func partList(ids []int) string {
	if len(ids) == 1 {
		return fmt.Sprintf("part %d", ids[0])
	}
	if ids[len(ids)-1]-ids[0] == len(ids)-1 {
		return fmt.Sprintf("parts %d–%d", ids[0], ids[len(ids)-1])
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return "parts " + strings.Join(s, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
