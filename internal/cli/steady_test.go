package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
)

// TestSteadySQLite: a real tproc-c run long enough for MSER-5's four
// batches says in its summary whether its window was steady, as its
// document records it; a sweep's run logs the same for its point, and
// the sweep's results count the steady windows.
func TestSteadySQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := "sqlite:" + filepath.Join(dir, "x.db")
	spec := filepath.Join(dir, "steady.yaml")
	body := "name: steady\n" +
		"target: {url: '" + u + "'}\n" +
		"workload: tproc-c\n" +
		"build: {warehouses: 1}\n" +
		"run: {rampup: 1s, duration: 20s}\n" +
		"vary:\n  vus: [2]\n" +
		"repeat: 1\n"
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	o := mustRun(t, "sweep", spec, "--out", out)
	st := readSweep(t, out).Points[0].Steady
	if len(st) != 1 || !judged(st[0]) {
		t.Fatalf("the sweep point's steady state %v, want one judged over about 20 s", st)
	}
	wantIn(t, "sweep stderr", o.stderr, "point 1, repetition 1: "+st[0].Line()+"\n")
	steady := 0
	if st[0].Verdict == result.SteadyOK {
		steady = 1
	}
	wantIn(t, "sweep stdout", o.stdout, fmt.Sprintf("Steady state (MSER-5): %d of 1 runs judged had a steady window.", steady))

	path := filepath.Join(dir, "run.json")
	o = mustRun(t, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "2s", "--duration", "20s", "--json", path)
	doc := readDoc(t, path, "sqlite", "sql")
	if !judged(doc.Steady) || doc.Steady.Rampup != 2 {
		t.Fatalf("the run's steady state %+v, want one judged over about 20 s after a 2 s ramp-up", doc.Steady)
	}
	wantIn(t, "run stdout", o.stdout, "\n"+doc.Steady.Line()+"\n")
	if !strings.HasPrefix(doc.Steady.Line(), "Steady state: steady") && !strings.HasPrefix(doc.Steady.Line(), "Steady state: not steady") {
		t.Errorf("line %q says neither steady nor not steady", doc.Steady.Line())
	}
}

// judged: MSER-5 judged about 20 s of window.
func judged(s *result.Steady) bool {
	return s != nil && s.Method == "MSER-5" && s.Verdict != result.SteadyShort && s.Seconds >= 19 && s.Seconds <= 21
}
