package result

import (
	"cmp"
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
	return merge(parts, missing, o)
}

// gather checks that docs are parts of one run, each once, and returns
// them in the parts' order.
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
	if a.Part.ConfigSHA256 != b.Part.ConfigSHA256 {
		fa, fb := flatConfig(a.Config), flatConfig(b.Config)
		keys := configDiff(fa, fb)
		if len(keys) == 0 {
			out = append(out, fmt.Sprintf("configuration hash: %s in part %d, %s in part %d (options outside the config differ)",
				shortID(a.Part.ConfigSHA256), a.Part.Index, shortID(b.Part.ConfigSHA256), b.Part.Index))
		}
		for _, k := range keys {
			differ(k, cmp.Or(fa[k], "none"), cmp.Or(fb[k], "none"))
		}
	}
	return out
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
