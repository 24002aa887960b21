package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// part is one dbrig process of a run in parts.
type part struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr *watch // sees the part wait at the barrier
	exited chan error
}

// startPart starts dbrig run with args as a process of its own, as a part
// on another host would be.
func startPart(t *testing.T, bin string, args ...string) *part {
	t.Helper()
	p := &part{cmd: exec.Command(bin, args...), exited: make(chan error, 1), stderr: newWatch("waiting for the other parts")}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// wait waits for the part to exit, up to limit, and returns its exit code.
func (p *part) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-p.exited:
		t.Logf("$ dbrig %s\n--- stdout:\n%s--- stderr:\n%s", strings.Join(p.cmd.Args[1:], " "), &p.stdout, p.stderr)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		t.Fatalf("dbrig %s still running after %s:\n%s", strings.Join(p.cmd.Args[1:], " "), limit, p.stderr)
	}
	return -1
}

// lastLine is the part's last line on stderr: its error, when it failed.
func (p *part) lastLine() string {
	lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	return lines[len(lines)-1]
}

// TestPartsPostgres: a run of 6 VUs in three parts, three processes, the
// third started 5 s after the others, against one PostgreSQL: they meet,
// measure one window, and dbrig merge makes one document of theirs that
// agrees with the database and holds their figures added up. Then a part
// killed mid-run: the others finish, and the merge names it.
func TestPartsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three dbrig processes for 20 s, twice")
	}
	u := pgtest.NewDB(t)
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "2")
	bin := buildBinary(t)
	dir := t.TempDir()
	run := func(name string, k int, extra ...string) *part {
		args := append([]string{"run", "tproc-c", "--target", u, "--vus", "6", "--rampup", "2s", "--duration", "12s",
			"--part", fmt.Sprintf("%d/3", k), "--part-run", name, "--part-timeout", "60s",
			"--json", filepath.Join(dir, fmt.Sprintf("%s%d.json", name, k))}, extra...)
		return startPart(t, bin, args...)
	}
	paths := func(name string, ks ...int) []string {
		var ps []string
		for _, k := range ks {
			ps = append(ps, filepath.Join(dir, fmt.Sprintf("%s%d.json", name, k)))
		}
		return ps
	}

	t.Run("together", func(t *testing.T) {
		ps := []*part{run("a", 1), run("a", 2)}
		time.Sleep(5 * time.Second)
		ps = append(ps, run("a", 3))
		for _, p := range ps {
			if code := p.wait(t, 2*time.Minute); code != 0 {
				t.Fatalf("a part exited %d, want 0: %s", code, p.lastLine())
			}
		}
		docs := readParts(t, paths("a", 1, 2, 3))
		var starts []time.Time
		for _, d := range docs {
			starts = append(starts, d.Part.WindowStart)
		}
		if spread := slices.MaxFunc(starts, time.Time.Compare).Sub(slices.MinFunc(starts, time.Time.Compare)); spread > time.Second || spread < 0 {
			t.Errorf("the parts' windows started %s apart, want within 1 s", spread)
		}
		all := filepath.Join(dir, "all.json")
		o := mustRun(t, append(append([]string{"merge"}, paths("a", 1, 2, 3)...), "--json", all)...)
		wantIn(t, "merge", o.stdout, "Result: "+all)
		merged, err := result.Read(all)
		if err != nil {
			t.Fatal(err)
		}
		checkMerged(t, merged, docs)
		html := filepath.Join(dir, "all.html")
		mustRun(t, "report", all, "-o", html)
		if page, err := os.ReadFile(html); err != nil || !strings.Contains(string(page), "NOPM") {
			t.Errorf("the report of the merged run does not render its NOPM (%v)", err)
		}
		wantIn(t, "report --text", mustRun(t, "report", "--text", all).stdout, "NOPM")
		editedParts(t, paths("a", 1, 2, 3))
	})

	t.Run("killed", func(t *testing.T) {
		ps := []*part{run("b", 1), run("b", 2), run("b", 3)}
		// The parts meet within a second or two, start 2 s later, ramp
		// up for 2 s: 11 s in, part 2 is mid-window (its 12 s end some
		// 17 s in).
		time.Sleep(11 * time.Second)
		if err := ps[1].cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{0, 2} {
			if code := ps[k].wait(t, 2*time.Minute); code != 0 {
				t.Fatalf("part %d exited %d after part 2 was killed, want 0: %s", k+1, code, ps[k].lastLine())
			}
		}
		ps[1].wait(t, 10*time.Second)
		present := paths("b", 1, 3)
		line := usageError(t, dbrig(t, append(append([]string{"merge"}, present...), "--json", filepath.Join(dir, "b.json"))...))
		wantIn(t, "merge's refusal", line, "part 2")
		wantIn(t, "merge's refusal", line, "--allow-missing")
		mustRun(t, append(append([]string{"merge", "--allow-missing"}, present...), "--json", filepath.Join(dir, "b.json"))...)
		merged, err := result.Read(filepath.Join(dir, "b.json"))
		if err != nil {
			t.Fatal(err)
		}
		if merged.Parts == nil || !slices.Equal(merged.Parts.Missing, []int{2}) {
			t.Fatalf("parts = %+v, want part 2 missing", merged.Parts)
		}
		if len(merged.Lines) == 0 || !strings.Contains(merged.Lines[0], "2") || !strings.Contains(strings.ToLower(merged.Lines[0]), "missing") {
			t.Errorf("the first summary line %q does not say part 2 is missing", merged.Lines)
		}
	})

	// The parts that never run a transaction wait and refuse at once:
	// a part timing out, a Ctrl-C at the barrier, flags that differ.
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		ps := []*part{run("c", 1, "--part-timeout", "4s"), run("c", 2, "--part-timeout", "4s")}
		for _, p := range ps {
			if code := p.wait(t, 30*time.Second); code != 2 {
				t.Errorf("exit %d, want 2 when part 3 never came", code)
			}
			wantIn(t, "the error", p.lastLine(), "part 3")
			if !strings.HasPrefix(p.lastLine(), "dbrig: ") || strings.Contains(p.stdout.String(), "Result:") {
				t.Errorf("stdout %q, last line %q: want no result and one error line", &p.stdout, p.lastLine())
			}
		}
		for _, p := range paths("c", 1, 2) {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s was written, want no document from a run that never started", p)
			}
		}
	})

	t.Run("ctrl-c at the barrier", func(t *testing.T) {
		t.Parallel()
		p := run("e", 1)
		select {
		case <-p.stderr.seen:
		case <-time.After(30 * time.Second):
			t.Fatalf("part 1 did not reach the barrier within 30 s:\n%s", p.stderr)
		}
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 30*time.Second); code != 2 {
			t.Errorf("exit %d after Ctrl-C at the barrier, want 2", code)
		}
		wantIn(t, "the error", p.lastLine(), "part 1/3: stopped before the run started")
	})

	t.Run("flags differ", func(t *testing.T) {
		t.Parallel()
		ps := []*part{run("d", 1), run("d", 2, "--duration", "10s")}
		for _, p := range ps {
			if code := p.wait(t, 30*time.Second); code != 2 {
				t.Errorf("exit %d, want 2 when the parts' durations differ", code)
			}
			wantIn(t, "the error", p.lastLine(), "duration")
		}
	})
}

// editedParts: merge refuses a real split run's parts edited after the
// run, each edit in one line that names the part and the field, and
// report refuses the edits a document shows by itself.
func editedParts(t *testing.T, paths []string) {
	t.Helper()
	dir := t.TempDir()
	read := func(k int) map[string]any {
		b, err := os.ReadFile(paths[k])
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var doc map[string]any
		if err := d.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	section := func(doc map[string]any, key string) map[string]any { return doc[key].(map[string]any) }
	tx := func(doc map[string]any, i int) map[string]any { return doc["transactions"].([]any)[i].(map[string]any) }
	add := func(m map[string]any, key string, n int64) {
		v, err := m[key].(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		m[key] = v + n
	}
	// Part 2 is edited, unless it is the one that read the database.
	edited := 2
	if section(read(1), "part")["marker"] == true {
		edited = 3
	}
	for _, c := range []struct {
		name   string
		edit   func(doc map[string]any)
		field  string
		report bool // report refuses the edited document alone
	}{
		{"warehouses", func(d map[string]any) { add(section(d, "config"), "warehouses", 1) }, "warehouses", true},
		{"mode", func(d map[string]any) { section(d, "config")["mode"] = "sql" }, "mode", true},
		{"seed", func(d map[string]any) { add(section(d, "config"), "seed", 1) }, "seed", true},
		{"duration", func(d map[string]any) { section(d, "config")["duration"] = "40s" }, "duration", true},
		{"vus in the config", func(d map[string]any) { section(d, "config")["vus"] = 12 }, "vus", true},
		{"count raised", func(d map[string]any) { add(tx(d, 0), "count", 100000) }, "count", true},
		{"count negative", func(d map[string]any) { tx(d, 1)["count"] = -5 }, "count", true},
		{"a second marker", func(d map[string]any) { section(d, "part")["marker"] = true }, "marker", false},
		{"200 VUs", func(d map[string]any) { section(d, "part")["vus"] = 200 }, "vus", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var args []string
			for k := range paths {
				doc := read(k)
				if k+1 == edited {
					c.edit(doc)
				}
				b, err := json.Marshal(doc)
				if err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(dir, fmt.Sprintf("%s-%d.json", strings.ReplaceAll(c.name, " ", "-"), k+1))
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, p)
			}
			line := usageError(t, dbrig(t, append(append([]string{"merge"}, args...), "--json", filepath.Join(dir, "all.json"))...))
			wantIn(t, "merge's refusal", line, fmt.Sprintf("part %d", edited))
			wantIn(t, "merge's refusal", line, c.field)
			if c.report {
				line := usageError(t, dbrig(t, "report", "--text", args[edited-1]))
				wantIn(t, "report's refusal", line, c.field)
			}
		})
	}
}

// readParts reads the parts' documents, each of which must say which
// part it is.
func readParts(t *testing.T, paths []string) []*result.Document {
	t.Helper()
	var docs []*result.Document
	for i, p := range paths {
		d, err := result.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if d.Part == nil || d.Part.Of != len(paths) || d.Part.Index != i+1 {
			t.Fatalf("%s: part %+v, want part %d of %d", p, d.Part, i+1, len(paths))
		}
		docs = append(docs, d)
	}
	return docs
}

// checkMerged checks a merged document against its parts': the client's
// NOPM agrees with the database's, each type's count is the parts' sum,
// and its percentiles are those of the parts' histograms added up.
func checkMerged(t *testing.T, merged *result.Document, docs []*result.Document) {
	t.Helper()
	if merged.Parts == nil || !slices.Equal(merged.Parts.Present, []int{1, 2, 3}) || merged.Part != nil {
		t.Fatalf("parts = %+v, part = %+v: want a merged document of parts 1-3", merged.Parts, merged.Part)
	}
	m, ok := merged.Metric("nopm")
	if !ok || m.DB == nil || m.Client == nil || *m.DB == 0 {
		t.Fatalf("merged NOPM %+v: want both sides", m)
	}
	if d := math.Abs(*m.Client / *m.DB - 1); d > 0.01 {
		t.Errorf("merged NOPM: client %.1f, database %.1f, %.2f%% apart: want within 1%%", *m.Client, *m.DB, d*100)
	}
	// The other parts' sessions, in other processes, are the run's own:
	// the marking part's telemetry saw no other client's.
	if tel := merged.Telemetry; tel == nil || tel.Others == nil || tel.Others.Sessions != 0 {
		t.Errorf("the merged run's telemetry %+v: want no other client's session, the other parts' counted as the run's", tel)
	}
	for i, tx := range merged.Transactions {
		var count int64
		hist := latency.NewHistogram()
		for _, d := range docs {
			count += d.Transactions[i].Count
			h, err := latency.Decode(d.Transactions[i].Histogram)
			if err != nil {
				t.Fatal(err)
			}
			hist.Merge(h)
		}
		if tx.Count != count {
			t.Errorf("%s: merged count %d, the parts' sum %d", tx.Name, tx.Count, count)
		}
		if want := latency.Summarize(hist); tx.Latency != want {
			t.Errorf("%s: merged latency %+v, want the parts' histograms added: %+v", tx.Name, tx.Latency, want)
		}
		checkHistogram(t, tx.Name, tx.Histogram, hist)
	}
	for k, v := range merged.Counters {
		var sum int64
		for _, d := range docs {
			sum += d.Counters[k]
		}
		if v != sum {
			t.Errorf("counter %s: merged %d, the parts' sum %d", k, v, sum)
		}
	}
}

// checkHistogram checks that the merged document's encoded histogram is
// the parts' histograms added up.
func checkHistogram(t *testing.T, name, enc string, want *hdrhistogram.Histogram) {
	t.Helper()
	got, err := latency.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equals(want) {
		t.Errorf("%s: the merged histogram (%d values) is not the parts' added up (%d)", name, got.TotalCount(), want.TotalCount())
	}
}

// TestPartRefused: --part's own mistakes, and a target it cannot work
// with, are one line each, before anything runs.
func TestPartRefused(t *testing.T) {
	u := sqliteTPROCC(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--part", "3/2"}, "--part"},
		{[]string{"--part", "x"}, "--part"},
		{[]string{"--part", "1/2", "--vus", "1"}, "--vus"},
		{[]string{"--part", "1/2", "--part-timeout", "0s"}, "--part-timeout"},
		{[]string{"--part", "1/2"}, "sqlite"},
	} {
		args := append([]string{"run", "tproc-c", "--target", u, "--duration", "1s", "--rampup", "0s"}, c.args...)
		wantIn(t, "the error", usageError(t, dbrig(t, args...)), c.want)
	}
	wantIn(t, "the error", usageError(t, dbrig(t, "run", "cpu", "--target", u, "--part", "1/2")), "--part")
}

// TestPartsDropPostgres: a run in two parts leaves its barrier's tables
// (see parts.Drop), and `dbrig drop` leaves no table of dbrig's behind.
func TestPartsDropPostgres(t *testing.T) {
	t.Parallel()
	u := pgTPROCC(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	var ps []*part
	for k := 1; k <= 2; k++ {
		ps = append(ps, startPart(t, bin, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "0s", "--duration", "2s",
			"--part", fmt.Sprintf("%d/2", k), "--part-timeout", "60s", "--json", filepath.Join(dir, fmt.Sprintf("p%d.json", k))))
	}
	for _, p := range ps {
		if code := p.wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("a part exited %d, want 0: %s", code, p.lastLine())
		}
	}
	const ours = `SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'dbrig\_%'`
	if n := pgInt(t, u, ours); n < 3 {
		t.Fatalf("%d tables of dbrig's after the run, want the build's two and the barrier's", n)
	}
	mustRun(t, "drop", "tproc-c", "--target", u)
	if n := pgInt(t, u, ours); n != 0 {
		t.Errorf("%d tables of dbrig's left after drop: %v", n, pgValue[[]string](t, u, `SELECT array_agg(tablename::text) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'dbrig\_%'`))
	}
}
