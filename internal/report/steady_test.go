package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
)

// TestSteadyOlderDocument: a document from before the steady state was
// recorded gets it from its series, in the summary and the report, and
// the seconds MSER-5 truncated are shaded on the throughput chart.
func TestSteadyOlderDocument(t *testing.T) {
	d, err := Load("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	if d.Run.Steady != nil {
		t.Fatal("testdata/run.json records a steady state; the test wants an older document")
	}
	const want = "Steady state: steady from second 10 of 20. The first 10 s were truncated by MSER-5 (they move the window's mean by -1.5%); --rampup 15s would have left them out."
	var text bytes.Buffer
	Text(&text, d.Run)
	if !strings.Contains(text.String(), want+"\n") {
		t.Errorf("summary lacks %q:\n%s", want, text.String())
	}
	out := render(t, "testdata/run.json")
	for _, w := range []string{want, "Kelton & Law 1983", "MSER-5 warm-up", "Shaded blue: the window's first 10 s"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q", w)
		}
	}
}

// TestSteadySweep: each point says how many of its repetitions' windows
// were steady, and the sweep names the runs that were not.
func TestSteadySweep(t *testing.T) {
	dir := t.TempDir()
	s, err := result.ReadSweep("testdata/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	ok := &result.Steady{Method: "MSER-5", Verdict: result.SteadyOK, Seconds: 60}
	late := &result.Steady{Method: "MSER-5", Verdict: result.SteadyLate, Seconds: 60, Truncated: 35, BiasPct: -9.6, Rampup: 10, SuggestedRampup: 45}
	s.Points[0].Steady = []*result.Steady{ok, ok}
	s.Points[1].Steady = []*result.Steady{late, ok}
	lines := SweepSteadyLines(s)
	want := []string{
		"Steady state (MSER-5): 3 of 4 runs judged had a steady window.",
		"Point 2 (" + paramsLabel(s.Varied, s.Points[1].Params) + "), repetition 1: not steady: MSER-5 truncates 35 s of 60, past half the window",
	}
	if len(lines) != 2 || lines[0] != want[0] || !strings.HasPrefix(lines[1], want[1]) {
		t.Errorf("lines %q, want %q", lines, want)
	}
	path := filepath.Join(dir, "sweep.json")
	if err := result.WriteSweep(path, s); err != nil {
		t.Fatal(err)
	}
	out := render(t, path)
	for _, w := range append(want, "<th class=\"num\">steady</th>", ">1 of 2<", ">2 of 2<") {
		if !strings.Contains(out, w) {
			t.Errorf("sweep report lacks %q", w)
		}
	}
}
