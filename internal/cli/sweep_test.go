package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// sqliteSweep writes a small sweep spec on an SQLite file: vus 1 and 2,
// twice each, baseline one VU.
func sqliteSweep(t *testing.T, dir, duration string) string {
	t.Helper()
	spec := filepath.Join(dir, "vus.yaml")
	body := "name: vus\n" +
		"target: {url: 'sqlite:" + filepath.Join(dir, "x.db") + "'}\n" +
		"workload: tproc-c\n" +
		"build: {warehouses: 1}\n" +
		"run: {rampup: 0s, duration: " + duration + "}\n" +
		"vary:\n  vus: [1, 2]\n" +
		"baseline: {vus: 1}\n" +
		"repeat: 2\n"
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

func readSweep(t *testing.T, dir string) *result.Sweep {
	t.Helper()
	sw, err := result.ReadSweep(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

// checkComplete checks a finished two-point, two-repetition sweep.
func checkComplete(t *testing.T, dir string) {
	t.Helper()
	sw := readSweep(t, dir)
	if sw.Done != 4 || len(sw.Order) != 4 || !sw.Complete || sw.Interrupted {
		t.Fatalf("done %d of %d, complete %v, interrupted %v; want 4 of 4, complete", sw.Done, len(sw.Order), sw.Complete, sw.Interrupted)
	}
	if strings.Join(sw.Varied, ",") != "vus" || sw.Repeat != 2 || sw.Target.Kind != "sqlite" || sw.Workload != "tproc-c" {
		t.Errorf("varied %v, repeat %d, target %+v, workload %s", sw.Varied, sw.Repeat, sw.Target, sw.Workload)
	}
	want := [][2]int{{0, 1}, {1, 1}, {0, 2}, {1, 2}}
	for i := range want {
		if sw.Order[i] != want[i] {
			t.Errorf("order %v, want interleaved %v", sw.Order, want)
			break
		}
	}
	if len(sw.Points) != 2 {
		t.Fatalf("%d points, want 2", len(sw.Points))
	}
	for i, p := range sw.Points {
		if p.Params["vus"] != []string{"1", "2"}[i] {
			t.Errorf("point %d params %v", i+1, p.Params)
		}
		if st := p.Stats["nopm"]; st == nil || st.N != 2 || len(p.Values["nopm"]) != 2 || len(p.Values["tpm"]) != 2 || len(p.P95) != 2 {
			t.Errorf("point %d: stats %+v, values %v, p95 %v; want 2 repetitions", i+1, p.Stats, p.Values, p.P95)
			continue
		}
		if st := p.Stats["nopm"]; st.Mean <= 0 || st.CILow > st.Mean || st.CIHigh < st.Mean || result.Mean(p.P95) <= 0 {
			t.Errorf("point %d stats %+v, p95 %v", i+1, st, p.P95)
		}
		for rep, run := range p.Runs {
			doc, err := result.Read(filepath.Join(dir, run))
			if err != nil {
				t.Errorf("point %d repetition %d: %v", i+1, rep+1, err)
				continue
			}
			if doc.Interrupted || doc.Config["vus"] != float64(i+1) {
				t.Errorf("%s: interrupted %v, vus %v", run, doc.Interrupted, doc.Config["vus"])
			}
			if m, ok := doc.Metric("nopm"); !ok || m.Value() != p.Values["nopm"][rep] {
				t.Errorf("%s: nopm %v, the sweep has %v", run, m, p.Values["nopm"][rep])
			}
		}
	}
	base, other := sw.Points[0], sw.Points[1]
	if base.BaselinePoint != -1 || len(base.Gains) != 0 {
		t.Errorf("baseline point: baseline_point %d, gains %+v; want -1 and none", base.BaselinePoint, base.Gains)
	}
	if other.BaselinePoint != 0 || other.Gains["nopm"] == nil || other.Gains["tpm"] == nil {
		t.Fatalf("point 2: baseline_point %d, gains %+v; want 0 and a gain per metric", other.BaselinePoint, other.Gains)
	}
	g := other.Gains["nopm"]
	if pct := (other.Stats["nopm"].Mean/base.Stats["nopm"].Mean - 1) * 100; abs(g.Pct-pct) > 1e-6 || g.Low > g.Pct || g.High < g.Pct {
		t.Errorf("gain %+v, want %.2f%% inside its interval", g, pct)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestSweepSQLite: a whole sweep on an external SQLite target, and
// --dry-run printing the plan without running anything.
func TestSweepSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := sqliteSweep(t, dir, "2s")
	out := filepath.Join(dir, "out")

	o := mustRun(t, "sweep", spec, "--dry-run", "--out", out)
	for _, want := range []string{"point  vus", "1      1    baseline", "2 points × 2 repetitions = 4 runs",
		"Order (point numbers, repetitions interleaved): 1 2 | 1 2", "Estimated duration: about 28s"} {
		wantIn(t, "dry-run stdout", o.stdout, want)
	}
	noFile(t, out)
	noFile(t, filepath.Join(dir, "x.db"))

	o = mustRun(t, "sweep", spec, "--out", out)
	wantIn(t, "stderr", o.stderr, "run 3/4: point 1 (vus=1), repetition 2 — about ")
	wantIn(t, "stdout", o.stdout, "Sweep: "+filepath.Join(out, "sweep.json"))
	wantIn(t, "stdout", o.stdout, "baseline")
	// Each point's line ends with what limited its two repetitions.
	if !regexp.MustCompile(`(?m)change % \[95% interval\] +limited by$`).MatchString(o.stdout) ||
		len(regexp.MustCompile(`(?m)^ +[12] .* \([12] of 2( each)?\)$`).FindAllString(o.stdout, -1)) != 2 {
		t.Errorf("the results' table has no verdict for each point:\n%s", o.stdout)
	}
	checkComplete(t, out)
	if sw := readSweep(t, out); !strings.Contains(strings.Join(sw.Notes, "\n"), "not dropped between runs: the target is external") {
		t.Errorf("notes %q do not say why the page cache was left alone", sw.Notes)
	}

	// The directory holds a sweep now: a second one there is refused.
	line := usageError(t, dbrig(t, "sweep", spec, "--out", out))
	wantIn(t, "error", line, "dbrig sweep --resume "+out)
}

// TestSweepSpecErrors: the spec's mistakes come out as one line, exit 2,
// naming the file and line.
func TestSweepSpecErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "bad.yaml")
	write := func(s string) {
		if err := os.WriteFile(spec, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("target: {url: 'sqlite:x.db'}\nworkload: tproc-c\nrun:\n  duraton: 60s\n")
	line := usageError(t, dbrig(t, "sweep", spec))
	if want := "dbrig: " + spec + ` line 4: unknown key "duraton" in run`; !strings.HasPrefix(line, want) {
		t.Errorf("error %q, want it to start %q", line, want)
	}
	write("target: {url: 'sqlite:x.db'}\nworkload: tproc-c\nvary:\n  shared_buffers: [128MB]\n")
	line = usageError(t, dbrig(t, "sweep", spec, "--dry-run"))
	if want := "dbrig: " + spec + " line 4: shared_buffers is a server setting; only a managed target (target: {managed: postgres}) can vary it"; line != want {
		t.Errorf("error %q, want %q", line, want)
	}
	usageError(t, dbrig(t, "sweep"))
	usageError(t, dbrig(t, "sweep", "--resume", dir))
	usageError(t, dbrig(t, "sweep", filepath.Join(dir, "missing.yaml")))
}

// TestSweepSettingNames: a misspelt server setting is one line, exit 2,
// naming it and the name meant, both in --dry-run and when the sweep
// starts, before anything is created; without binaries to ask, --dry-run
// says it could not check.
func TestSweepSettingNames(t *testing.T) {
	t.Parallel()
	spec, out := managedSpec(t, "target: {managed: postgres, pg_bin: '%s', settings: {max_connections: 50}}\n"+
		"workload: tproc-c\n"+
		"vary:\n  shared_bufers: [128MB, 256MB]\n")
	want := "dbrig: " + spec + `: unknown PostgreSQL setting "shared_bufers" (did you mean shared_buffers?)`
	if line := usageError(t, dbrig(t, "sweep", spec, "--dry-run")); line != want {
		t.Errorf("dry run: %q, want %q", line, want)
	}
	o := dbrig(t, "sweep", spec, "--out", out)
	lines := strings.Split(strings.TrimSuffix(o.stderr, "\n"), "\n")
	if last := lines[len(lines)-1]; o.code != 2 || !strings.Contains(last, `unknown PostgreSQL setting "shared_bufers" (did you mean shared_buffers?)`) {
		t.Errorf("sweep: exit %d, last line %q", o.code, last)
	}
	if _, err := os.Stat(filepath.Join(out, "server")); !os.IsNotExist(err) {
		t.Errorf("the refused sweep created its server directory: %v", err)
	}

	good := filepath.Join(t.TempDir(), "good.yaml")
	if err := os.WriteFile(good, []byte("target: {managed: postgres, pg_bin: '"+t.TempDir()+"'}\nworkload: tproc-c\nvary:\n  shared_buffers: [128MB, 256MB]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o = mustRun(t, "sweep", good, "--dry-run")
	wantIn(t, "dry run without binaries", o.stdout, "Setting names: not checked (")
}

// waitFor waits until s appears in w's output after offset from, and
// returns where it ends.
func waitFor(t *testing.T, w *watch, exited <-chan error, s string, from int) int {
	t.Helper()
	// The wait is for 30 s of silence, not 30 s in all: a sweep's build
	// before its first run took longer on a busy host, printing its
	// progress all along.
	const quiet = 30 * time.Second
	deadline, seen, overall := time.After(quiet), 0, time.After(5*time.Minute)
	for {
		out := w.String()
		if i := strings.Index(out[from:], s); i >= 0 {
			return from + i + len(s)
		}
		if len(out) > seen {
			deadline, seen = time.After(quiet), len(out)
		}
		select {
		case err := <-exited:
			t.Fatalf("dbrig exited (%v) before printing %q:\n%s", err, s, out)
		case <-deadline:
			t.Fatalf("no %q, and nothing more printed for %s:\n%s", s, quiet, out)
		case <-overall:
			t.Fatalf("no %q within 5 minutes:\n%s", s, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startSweep runs the dbrig binary with args in the background.
func startSweep(t *testing.T, bin string, args ...string) (*watch, <-chan error, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout bytes.Buffer
	stderr := newWatch("\x00")
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
		t.Logf("$ dbrig %s\n--- stdout:\n%s--- stderr:\n%s", strings.Join(args, " "), &stdout, stderr)
	})
	return stderr, exited, cmd
}

// waitExit waits for a sweep that Ctrl-C stopped to exit with the
// interrupt code.
func waitExit(t *testing.T, exited <-chan error, out *watch) {
	t.Helper()
	select {
	case err := <-exited:
		if code := exitOf(t, err); code != exitcode.Interrupted {
			t.Fatalf("dbrig exited %d after Ctrl-C, want %d\n%s", code, exitcode.Interrupted, out)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("dbrig still running 20s after Ctrl-C:\n%s", out)
	}
}

// TestSweepInterruptResume: Ctrl-C stops after the current run, a second
// Ctrl-C interrupts the run itself, and --resume carries on to the end.
func TestSweepInterruptResume(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	spec := sqliteSweep(t, dir, "2s")
	out := filepath.Join(dir, "out")

	// One Ctrl-C during the first run: that run finishes and counts.
	stderr, exited, cmd := startSweep(t, bin, "sweep", spec, "--out", out)
	waitFor(t, stderr, exited, "run 1/4:", 0)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitExit(t, exited, stderr)
	wantIn(t, "stderr", stderr.String(), "stopping after the current run")
	sw := readSweep(t, out)
	if sw.Done != 1 || sw.Complete || !sw.Interrupted {
		t.Fatalf("after one Ctrl-C: done %d, complete %v, interrupted %v; want 1, false, true", sw.Done, sw.Complete, sw.Interrupted)
	}
	if sw.Points[0].Runs[0] == "" || len(sw.Points[0].Values["nopm"]) != 1 {
		t.Errorf("point 1 after its first run: runs %v, values %v", sw.Points[0].Runs, sw.Points[0].Values)
	}

	// Two Ctrl-Cs during the second run: it ends early, is kept marked
	// interrupted, and does not count.
	stderr, exited, cmd = startSweep(t, bin, "sweep", "--resume", out)
	at := waitFor(t, stderr, exited, "run 2/4:", 0)
	waitFor(t, stderr, exited, "measure", at)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stderr, exited, "stopping after the current run", at)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitExit(t, exited, stderr)
	sw = readSweep(t, out)
	if sw.Done != 1 || sw.Complete || !sw.Interrupted {
		t.Fatalf("after two Ctrl-Cs: done %d, complete %v, interrupted %v; want 1, false, true", sw.Done, sw.Complete, sw.Interrupted)
	}
	if sw.Points[1].Runs[0] != "" || len(sw.Points[1].Values["nopm"]) != 0 {
		t.Errorf("the interrupted run counted: runs %v, values %v", sw.Points[1].Runs, sw.Points[1].Values)
	}
	doc, err := result.Read(filepath.Join(out, "runs", "p02-r1-interrupted.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Interrupted {
		t.Error("the interrupted run's document is not marked interrupted")
	}

	o := mustRun(t, "sweep", "--resume", out)
	wantIn(t, "stderr", o.stderr, "Resuming sweep vus at run 2 of 4")
	checkComplete(t, out)
	if sw := readSweep(t, out); len(sw.Notes) == 0 || !strings.Contains(strings.Join(sw.Notes, "\n"), "p02-r1-interrupted.json") {
		t.Errorf("notes %q do not mention the interrupted run", sw.Notes)
	}
	// A complete sweep resumes to nothing.
	o = mustRun(t, "sweep", "--resume", out)
	wantIn(t, "stderr", o.stderr, "already complete")
}

// TestSweepRejectedSetting: a managed sweep whose setting the server
// rejects stops at that point with the server's own message, exit 2,
// and keeps its sweep document and the server's log.
func TestSweepRejectedSetting(t *testing.T) {
	t.Parallel()
	spec, out := managedSpec(t, "name: bad-setting\n"+
		"target: {managed: true, pg_bin: '%s'}\n"+
		"workload: tproc-c\n"+
		"run: {rampup: 0s, duration: 1s}\n"+
		"vary:\n  shared_buffers: [notasize]\n")
	// The sweep has begun, so stderr holds its progress first; the error
	// is the one last line.
	o := dbrig(t, "sweep", spec, "--out", out)
	if o.code != 2 {
		t.Errorf("exit %d, want 2", o.code)
	}
	lines := strings.Split(strings.TrimSuffix(o.stderr, "\n"), "\n")
	line := lines[len(lines)-1]
	if !strings.HasPrefix(line, "dbrig: ") {
		t.Errorf("last line of stderr %q does not start with \"dbrig: \"", line)
	}
	wantIn(t, "error", line, "point 1 (shared_buffers=notasize)")
	wantIn(t, "error", line, `invalid value for parameter "shared_buffers": "notasize"`)
	sw := readSweep(t, out)
	if sw.Done != 0 || sw.Complete || len(sw.Points) != 1 || len(sw.Points[0].Errors) != 1 {
		t.Fatalf("done %d, complete %v, points %+v", sw.Done, sw.Complete, sw.Points)
	}
	wantIn(t, "point error", sw.Points[0].Errors[0], `"notasize"`)
	if b, err := os.ReadFile(filepath.Join(out, "server.log")); err != nil || !strings.Contains(string(b), "notasize") {
		t.Errorf("server.log kept beside the sweep: %v, holds %q", err, b)
	}
}

// TestSweepManagedPrewarm: a managed sweep creates its server under the
// sweep's directory, builds once, warms the cache where the point says
// so, keeps the server's log and stops the server at the end.
func TestSweepManagedPrewarm(t *testing.T) {
	t.Parallel()
	spec, out := managedSpec(t, "name: full-cache\n"+
		"target: {managed: true, pg_bin: '%s', settings: {shared_buffers: 128MB}}\n"+
		"workload: tproc-c\n"+
		"build: {warehouses: 1}\n"+
		"run: {rampup: 0s, duration: 1s, vus: 2}\n"+
		"vary:\n  prewarm: [none, full]\n"+
		"baseline: {prewarm: none}\n")
	o := mustRun(t, "sweep", spec, "--out", out)
	wantIn(t, "stderr", o.stderr, "% of ")
	wantIn(t, "stderr", o.stderr, " pages resident")
	wantIn(t, "stdout", o.stdout, "(not significant")
	sw := readSweep(t, out)
	if !sw.Complete || sw.Done != 2 || sw.Target.Kind != "postgres" || sw.Settings["shared_buffers"] != "128MB" {
		t.Fatalf("complete %v, done %d, target %+v, settings %v", sw.Complete, sw.Done, sw.Target, sw.Settings)
	}
	if len(sw.Points[0].Resident) != 0 || len(sw.Points[1].Resident) != 1 || sw.Points[1].Resident[0] < 0.95 {
		t.Errorf("resident: none %v, full %v; want nothing, then at least 0.95", sw.Points[0].Resident, sw.Points[1].Resident)
	}
	if g := sw.Points[1].Gains["nopm"]; g == nil || g.Significant {
		t.Errorf("gain from one repetition %+v, want one, not significant", g)
	}
	if !strings.Contains(strings.Join(sw.Notes, "\n"), "single repetition") {
		t.Errorf("notes %q do not say the gains have no interval", sw.Notes)
	}
	if _, err := os.Stat(filepath.Join(out, "server.log")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(out, "server", "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("the server is still running after the sweep (postmaster.pid: %v)", err)
	}
}

// TestSweepFailoverPostgres: a managed sweep on a cluster of its own, a
// primary and an asynchronous replica without an HA manager, whose runs
// lose the primary 2 s in and are audited. Each repetition's outage and
// audit go into its point, which gets their means with intervals, the
// outage's change over the baseline in seconds, and the audits' sums;
// each run's acknowledgement log lies beside its document; lost_acks is
// judged on every run; the closing table, its lines and the report's
// text say them.
func TestSweepFailoverPostgres(t *testing.T) {
	t.Parallel()
	spec, out := managedSpec(t, `name: failover
target: {managed: postgres, pg_bin: '%s', replicas: 1}
workload: tproc-c
build: {warehouses: 1}
run: {rampup: 0s, duration: 4s, failover_at: 2s, audit_durability: true}
vary: {vus: [1, 2]}
baseline: {vus: 1}
repeat: 2
thresholds: ['lost_acks<1000000']
`)
	// Each VU may leave a transaction in doubt at the failover: on a
	// loaded host a 4 s window can hold too few transactions for 1%.
	o := mustRun(t, "sweep", spec, "--out", out, "--max-error-rate", "5")
	sw := readSweep(t, out)
	if !sw.Complete || sw.Done != 4 {
		t.Fatalf("complete %v, done %d; want 4 runs", sw.Complete, sw.Done)
	}
	for i, p := range sw.Points {
		var acked, missing, inDoubt int64
		var outages []float64
		for rep, run := range p.Runs {
			doc, err := result.Read(filepath.Join(out, run))
			if err != nil {
				t.Fatal(err)
			}
			a, ok := doc.LongestOutage()
			du := doc.Durability
			if !ok || du == nil || du.Acknowledged == 0 || du.Log != strings.TrimSuffix(filepath.Base(run), ".json")+".acks" {
				t.Fatalf("%s: outage %+v (%v), durability %+v; want an outage, and an audit of the log beside it", run, a, ok, du)
			}
			if _, err := os.Stat(filepath.Join(out, "runs", du.Log)); err != nil {
				t.Errorf("point %d, repetition %d: %v", i+1, rep+1, err)
			}
			if len(doc.Thresholds) != 1 || doc.Thresholds[0].Unjudged || !doc.Thresholds[0].Met {
				t.Errorf("%s: thresholds %+v, want lost_acks judged and met", run, doc.Thresholds)
			}
			outages = append(outages, a.Outage.Seconds)
			acked, missing, inDoubt = acked+du.Acknowledged, missing+du.Missing, inDoubt+du.InDoubt
		}
		st := p.FaultStats[result.OutageKey]
		if st == nil || st.N != 2 || !slices.Equal(p.Faults[result.OutageKey], outages) || abs(st.Mean-result.Mean(outages)) > 1e-9 || st.CILow > st.Mean || st.CIHigh < st.Mean {
			t.Errorf("point %d: outage stats %+v of %v, want the mean of its runs' %v inside its interval", i+1, st, p.Faults[result.OutageKey], outages)
		}
		if vu := p.FaultStats[result.OutageVUMaxKey]; vu == nil || vu.N != 2 || p.FaultStats[result.InDoubtKey] == nil {
			t.Errorf("point %d: per-VU max %+v, in doubt %+v; want two repetitions each", i+1, vu, p.FaultStats[result.InDoubtKey])
		}
		want := result.DurabilitySum{Audits: 2, Acknowledged: acked, Missing: missing, InDoubt: inDoubt}
		if p.Durability == nil || *p.Durability != want || p.FaultStats[result.MissingKey] == nil {
			t.Errorf("point %d: audits %+v, missing %+v; want %+v, the sum of its runs'", i+1, p.Durability, p.FaultStats[result.MissingKey], want)
		}
	}
	base, other := sw.Points[0], sw.Points[1]
	c := other.FaultChanges[result.OutageKey]
	if c == nil || len(base.FaultChanges) != 0 || abs(c.Diff-(other.FaultStats[result.OutageKey].Mean-base.FaultStats[result.OutageKey].Mean)) > 1e-9 || c.Low > c.Diff || c.High < c.Diff {
		t.Fatalf("changes: baseline %+v, vus=2 %+v; want the difference of the means inside its interval, at vus=2 alone", base.FaultChanges, c)
	}
	for _, want := range []string{"outage s ± 95% CI", "per VU median/max s", "missing", "vus=2 ", " the outage by ", "s at vus=1 to ", "vus=1: 2 audits found "} {
		wantIn(t, "the closing table", o.stdout, want)
	}
	text := mustRun(t, "report", "--text", filepath.Join(out, "sweep.json")).stdout
	for _, want := range []string{"Faults: the outage and the durability audit", "outage 95% CI", "per VU median / max s", " the outage by "} {
		wantIn(t, "report --text", text, want)
	}
}

// managedSpec writes a managed-target spec, whose %s is replaced by the
// PostgreSQL bin directory, and makes its output directory under the
// system's temp dir: a short path keeps the server's socket inside it.
func managedSpec(t *testing.T, format string) (spec, out string) {
	t.Helper()
	bin, err := postgres.FindBinDir("")
	if err != nil {
		if os.Getenv("DBRIG_REQUIRE_PG") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	spec = filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte(fmt.Sprintf(format, bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = os.MkdirTemp("", "dbrig-sweep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	return spec, out
}

// TestSweepBlockIOSQLite: a sweep whose primary metric the target cannot
// measure (SQLite counts no cache misses) still writes its document, with
// no value for it rather than one nobody measured, and its other metrics.
func TestSweepBlockIOSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.yaml")
	body := "target: {url: 'sqlite:" + filepath.Join(dir, "b.db") + "'}\nworkload: block-io\nbuild: {scale: 2048}\n" +
		"run: {rampup: 0s, duration: 1s}\nvary: {vus: [1, 2]}\n"
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	mustRun(t, "sweep", spec, "--out", out)
	sw := readSweep(t, out)
	for i, p := range sw.Points {
		if len(p.Values["physical_reads_per_s"]) != 0 || len(p.Values["logical_reads_per_s"]) != 1 {
			t.Errorf("point %d: values %v; want no physical reads and one logical", i, p.Values)
		}
	}
}

// TestMixedRunSQLite: order entry and reports in one window, each with
// its own virtual users and metrics, in one document.
func TestMixedRunSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := "sqlite:" + filepath.Join(dir, "d.db")
	mustRun(t, "build", "dvd-store", "--target", u, "--size", "2MB")
	path := filepath.Join(dir, "r.json")
	mustRun(t, "run", "dvd-store", "--target", u, "--vus", "2", "--with", "dvd-reports:1", "--rampup", "0s", "--duration", "2s", "--json", path)
	doc, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, tx := range doc.Transactions {
		counts[tx.Name] = tx.Count
	}
	if counts["purchase"] == 0 || counts["dvd-reports:category_sales"] == 0 {
		t.Errorf("transactions %v: want purchases and report requests", counts)
	}
	opm, ok1 := doc.Metric("orders_per_minute")
	ms, ok2 := doc.Metric("dvd-reports:completion_ms")
	if !ok1 || !ok2 || opm.Client == nil || *opm.Client <= 0 || ms.Client == nil || *ms.Client <= 0 || doc.PrimaryMetric != "orders_per_minute" {
		t.Errorf("metrics %+v: want both groups', the order entry's primary", doc.Metrics)
	}
	for _, bad := range []string{"dvd-reports", "dvd-reports:0", "nosuch:1", "cpu:1"} {
		usageError(t, dbrig(t, "run", "dvd-store", "--target", u, "--with", bad, "--duration", "1s"))
	}

	// No order entry: the reports run alone, and the order entry's
	// metrics are absent, not zero.
	alone := filepath.Join(dir, "alone.json")
	o := mustRun(t, "run", "dvd-store", "--target", u, "--vus", "0", "--with", "dvd-reports:1", "--rampup", "0s", "--duration", "2s", "--json", alone)
	wantIn(t, "stdout", o.stdout, "dvd-store: no virtual users")
	if doc, err = result.Read(alone); err != nil {
		t.Fatal(err)
	}
	opm, _ = doc.Metric("orders_per_minute")
	ms, _ = doc.Metric("dvd-reports:completion_ms")
	if opm.Client != nil || opm.DB != nil || ms.Client == nil || *ms.Client <= 0 {
		t.Errorf("metrics %+v: want the reports' completion time and no orders per minute", doc.Metrics)
	}
	wantIn(t, "error", usageError(t, dbrig(t, "run", "dvd-store", "--target", u, "--vus", "0", "--duration", "1s")), "0 only beside --with")
}

// TestSweepWithSQLite: a sweep whose every run drives the reports beside
// the order entry keeps both workloads' metrics per point.
func TestSweepWithSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.yaml")
	body := "target: {url: 'sqlite:" + filepath.Join(dir, "d.db") + "'}\nworkload: dvd-store\nbuild: {size: 2MB}\n" +
		"run: {rampup: 0s, duration: 1s}\nwith: {dvd-reports: 1}\nvary: {vus: [0, 2]}\n"
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	mustRun(t, "sweep", spec, "--out", out)
	sw := readSweep(t, out)
	if !slices.ContainsFunc(sw.Metrics, func(m result.MetricDef) bool { return m.Key == "dvd-reports:completion_ms" }) {
		t.Errorf("the sweep declares no dvd-reports metrics: %+v", sw.Metrics)
	}
	// At vus 0 the reports run alone; at 2 beside the order entry.
	for i, p := range sw.Points {
		if len(p.Values["orders_per_minute"]) != i || len(p.Values["dvd-reports:completion_ms"]) != 1 {
			t.Errorf("point %d: values %v; want the reports' and, beside the order entry, its", i, p.Values)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(body, "dvd-reports: 1", "dvd-reports: none", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	wantIn(t, "error", usageError(t, dbrig(t, "sweep", bad, "--dry-run")), "with.dvd-reports: want its virtual users")
}

// TestSweepServerAB: a sweep across two server builds runs each point on
// its build's binaries, records the version it ran, and compares B with
// A. With DBRIG_PG18_BIN, B is another major version, with a cluster of
// its own built from the same seed; without it, B is the same binaries
// under another name, sharing A's cluster. A has a setting of its own.
func TestSweepServerAB(t *testing.T) {
	t.Parallel()
	other, major := "%[1]s", ""
	if bin, ok := pgtest.PG18Bin(t); ok {
		other, major = bin, "18."
	}
	spec, out := managedSpec(t, "name: ab\n"+
		"target: {managed: postgres, servers: {a: {bin: '%[1]s', settings: {max_connections: 77}}, b: '"+other+"'}}\n"+
		"workload: tproc-c\n"+
		"build: {warehouses: 1}\n"+
		"run: {rampup: 0s, duration: 2s, vus: 2}\n"+
		"vary:\n  server: [a, b]\n"+
		"baseline: {server: a}\n"+
		"repeat: 2\n")
	plan := mustRun(t, "sweep", spec, "--out", out, "--dry-run")
	wantIn(t, "plan", plan.stdout, "Server builds:")
	wantIn(t, "plan", plan.stdout, "cluster "+filepath.Join(out, "server-a"))

	o := mustRun(t, "sweep", spec, "--out", out)
	wantIn(t, "stdout", o.stdout, "server version")
	sw := readSweep(t, out)
	if !sw.Complete || sw.Done != 4 {
		t.Fatalf("complete %v, done %d; want 4 runs done", sw.Complete, sw.Done)
	}
	a, b := sw.Points[0], sw.Points[1]
	if a.Params["server"] != "a" || b.Params["server"] != "b" || a.ServerVersion == "" || !strings.HasPrefix(b.ServerVersion, major) {
		t.Errorf("points ran %s on %q and %s on %q; want a, then b on %s", a.Params["server"], a.ServerVersion, b.Params["server"], b.ServerVersion, major)
	}
	if g := b.Gains["nopm"]; g == nil || b.BaselinePoint != 0 {
		t.Errorf("b's gain over a %+v (baseline point %d), want one over point 0", g, b.BaselinePoint)
	}
	for i, want := range []bool{true, false} {
		doc, err := result.Read(filepath.Join(out, sw.Points[i].Runs[0]))
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Telemetry.DB.Settings["max_connections"]; (got == "77") != want {
			t.Errorf("point %d ran with max_connections %q: want 77 on a, its own setting, and not on b", i+1, got)
		}
	}
	// Each cluster is built once: the log says so once per cluster.
	builds := strings.Count(o.stderr, "Built tproc-c")
	_, ownErr := os.Stat(filepath.Join(out, "server-b"))
	if major != "" && (builds != 2 || ownErr != nil) {
		t.Errorf("another major version: %d builds, server-b %v; want a cluster of its own, built once", builds, ownErr)
	}
	if major == "" && (builds != 1 || !os.IsNotExist(ownErr)) {
		t.Errorf("the same binaries: %d builds, server-b %v; want one shared cluster, built once", builds, ownErr)
	}
	for _, dir := range []string{"server-a", "server-b"} {
		if _, err := os.Stat(filepath.Join(out, dir, "data", "postmaster.pid")); !os.IsNotExist(err) {
			t.Errorf("a server is still running in %s after the sweep (postmaster.pid: %v)", dir, err)
		}
	}
}

// TestSweepServerMissing: a build without binaries is refused in one line
// naming it and what is missing, before anything is written.
func TestSweepServerMissing(t *testing.T) {
	t.Parallel()
	spec, out := managedSpec(t, "target: {managed: postgres, servers: {a: '%s', b: /nonexistent/bin}}\n"+
		"workload: cpu\n"+
		"vary: {server: [a, b]}\n")
	line := usageError(t, dbrig(t, "sweep", spec, "--out", out))
	wantIn(t, "error", line, "target.servers: b: /nonexistent/bin has no PostgreSQL server binaries (postgres, initdb, pg_ctl missing)")
	noFile(t, filepath.Join(out, "sweep.json"))
}
