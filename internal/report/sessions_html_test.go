package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/latency"
)

// TestHTMLPooledRun: a pooled run (SQLite, tproc-c in sql mode, 200
// terminals on 1 session, --rampup 1s --duration 4s) has a sessions
// section beside its latency: the pool's figures, the wait's percentiles,
// a chart of the wait per second, and the verdict on its pool, which
// Reliability then leaves out.
func TestHTMLPooledRun(t *testing.T) {
	out := render(t, "testdata/pooled-run.json")
	for _, want := range []string{
		`<section id="sessions">`, "200 terminals over 1 session", "sessions in use, p95</td><td>1 of 1",
		"terminals queued, max</td><td>199", "100% of the window", "Wait for a session, ms", "170.75",
		"Wait for a session per second", `"y":342.015`,
		"200 terminals shared 1 session.", "session wait p95",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("pooled run report lacks %q", want)
		}
	}
	if n := strings.Count(out, "200 terminals need a larger pool"); n != 1 {
		t.Errorf("the pool's verdict is on the page %d times, want once", n)
	}
	if sessions, latency := strings.Index(out, `id="sessions"`), strings.Index(out, "<h2>Latency</h2>"); sessions < latency {
		t.Error("the sessions section is not after the latency's")
	}
	if plain := render(t, "testdata/run.json"); strings.Contains(plain, `id="sessions"`) || strings.Contains(plain, "session wait") {
		t.Error("a run with a session per VU shows a sessions section")
	}
}

// TestPoolVerdictFound: the sessions section finds the driver's own
// verdict among the notes.
func TestPoolVerdictFound(t *testing.T) {
	wait := latency.NewHistogram()
	for i := 1; i <= 100; i++ {
		latency.Record(wait, time.Duration(i)*time.Millisecond)
	}
	p := &driver.Pool{Terminals: 30, Sessions: 3, InUseP95: 3, InUseMax: 3, AllInUse: 0.97, Wait: wait}
	if v := p.Verdict(); v == "" || !isPoolVerdict(v) {
		t.Fatalf("verdict %q not recognized as the pool's", v)
	}
	if isPoolVerdict("Stall from 29.9 s for 15.1 s") {
		t.Error("a stall's note taken for the pool's verdict")
	}
}

// TestCompareSessions: comparing a pooled run with one of a session per
// VU puts the pool's figures side by side, the other side missing.
func TestCompareSessions(t *testing.T) {
	a, b := mustLoad(t, "testdata/pooled-run.json"), mustLoad(t, "testdata/run.json")
	c, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	const g = "sessions (--connections)"
	if r := find(c, g, "wait_p90_ms"); !near(r.A, 170.751) || !math.IsNaN(r.B) || !r.LowerIsBetter {
		t.Errorf("wait_p90_ms = %+v, want 170.751 and missing", r)
	}
	if r := find(c, g, "queued_p95"); r.A != 199 || !r.Count {
		t.Errorf("queued_p95 = %+v, want 199, a count", r)
	}
	// Sessions in use are a share of each pool: a smaller pool, as busy,
	// is no better.
	if r := find(c, g, "in_use_p95_pct"); r.A != 100 {
		t.Errorf("in_use_p95_pct = %+v, want 100 (1 of 1)", r)
	}
	var text bytes.Buffer
	c.Text(&text)
	if !strings.Contains(text.String(), g) || !strings.Contains(text.String(), "all_in_use_pct") {
		t.Errorf("the comparison's text lacks the sessions:\n%s", text.String())
	}
	if c, _ := Compare(b, b); len(c.Groups) > 0 && find(c, g, "wait_p90_ms").Metric != "" {
		t.Error("two runs without a pool compare sessions")
	}
}

func mustLoad(t *testing.T, path string) *Doc {
	t.Helper()
	d, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
