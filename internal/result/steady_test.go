package result

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// noisy is n seconds around level, each off by a seeded normal draw of
// spread sd, neighbours correlated (an AR(1) with 0.5), as real
// per-second completions are.
func noisy(n int, level, sd float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	xs := make([]float64, n)
	e := 0.0
	for i := range xs {
		e = 0.5*e + r.NormFloat64()*sd
		xs[i] = level + e
	}
	return xs
}

// TestMSERKnownAnswers: MSER-5's truncation and the verdict on series
// whose answer is known by construction.
func TestMSERKnownAnswers(t *testing.T) {
	// A warm-up: 10 s rising from 200 to 920 a second, then 1000 with a
	// small wobble; MSER-5 cuts exactly the first two batches.
	warm := make([]float64, 60)
	for i := range warm {
		warm[i] = 1000 + float64(i%3-1)
		if i < 10 {
			warm[i] = 200 + 80*float64(i)
		}
	}
	flat := make([]float64, 60)
	for i := range flat {
		flat[i] = 1000
	}
	// A steady drift: +0.3% of 1000 a second, with a wobble: MSER-5's
	// statistic falls to the end of a line, so its own rule says no
	// steady state.
	drifting := make([]float64, 60)
	for i := range drifting {
		drifting[i] = 1000 + 3*float64(i) + float64(i%3-1)*5
	}
	// The same drift under noise: MSER-5 cuts 10 s, and the trend test
	// finds the rest still rising.
	trend := noisy(60, 1000, 50, 1)
	for i := range trend {
		trend[i] += 3 * float64(i)
	}
	// Most of the window a ramp: 40 s from 500 to 1000, then flat.
	late := make([]float64, 60)
	for i := range late {
		late[i] = 1000 - 500*math.Max(0, 1-float64(i)/40) + float64(i%2)*4
	}
	for _, c := range []struct {
		name      string
		xs        []float64
		rampup    float64
		verdict   string
		truncated int
		suggested int
		line      string
	}{
		{"warm-up then flat", warm, 10, SteadyOK, 10, 20, "steady from second 10 of 60. The first 10 s were truncated by MSER-5"},
		{"flat", flat, 10, SteadyOK, 0, 0, "steady over the whole window: MSER-5 truncates none of its 60 s."},
		{"drift", drifting, 10, SteadyLate, 45, 55, "not steady: MSER-5 truncates 45 s of 60, past half the window"},
		{"noisy drift", trend, 10, SteadyTrend, 10, 20, "not steady: throughput still trending, +11.9% over the 50 s after MSER-5's truncation"},
		{"ramp past half", late, 2.5, SteadyLate, 40, 43, "not steady: MSER-5 truncates 40 s of 60, past half the window, and they move its mean by -17.0%"},
		{"short", flat[:19], 10, SteadyShort, 0, 0, "not judged: the window's 19 s are fewer than MSER-5's 4 batches of 5 s."},
	} {
		s := judge(c.xs, c.rampup)
		if s.Verdict != c.verdict || s.Truncated != c.truncated || s.SuggestedRampup != c.suggested {
			t.Errorf("%s: %+v, want verdict %q, truncated %d, suggested ramp-up %d", c.name, s, c.verdict, c.truncated, c.suggested)
		}
		if !strings.Contains(s.Line(), c.line) {
			t.Errorf("%s: line %q, want it to hold %q", c.name, s.Line(), c.line)
		}
	}
	// The drift's fitted change: 3 a second over the 50 s kept, of a mean
	// of about 1100, is 13.6%, and its interval holds it and not 0.
	if s := judge(trend, 10); math.Abs(s.DriftPct-13.6) > 4 || s.DriftLow > s.DriftPct || s.DriftHigh < s.DriftPct || s.DriftLow <= 0 {
		t.Errorf("drift %+.2f%% [%+.2f, %+.2f], want about +13.6%% with an interval above 0", s.DriftPct, s.DriftLow, s.DriftHigh)
	}
	// The warm-up's cost: the window's mean against the flat 1000.
	if s := judge(warm, 10); math.Abs(s.BiasPct-(Mean(warm)/1000-1)*100) > 0.01 {
		t.Errorf("bias %+.2f%%, want %+.2f%%", s.BiasPct, (Mean(warm)/1000-1)*100)
	}
}

// TestMSERNoise: series that are only noise (a 6% spread a second) are
// judged steady; of 200 seeds, MSER-5's late truncations and the trend
// test together call 15 unsteady, 7.5%: the rate a single verdict carries.
func TestMSERNoise(t *testing.T) {
	unsteady := 0
	for seed := range uint64(200) {
		s := judge(noisy(60, 1000, 50, seed), 10)
		if s.Verdict != SteadyOK {
			unsteady++
		}
	}
	if unsteady > 20 {
		t.Errorf("%d of 200 noise series judged unsteady, want at most 20 (10%%)", unsteady)
	}
	// A warm-up under the same noise: 15 s from half the level is cut,
	// and the ramp-up suggested leaves it out.
	xs := noisy(60, 1000, 50, 7)
	for i := range 15 {
		xs[i] *= 0.5 + float64(i)/30
	}
	if s := judge(xs, 5); s.Verdict != SteadyOK || s.Truncated < 15 || s.SuggestedRampup != 5+s.Truncated || s.BiasPct > -3 {
		t.Errorf("noisy warm-up: %+v, want steady, 15 s or more truncated, a ramp-up that leaves them out, and a mean more than 3%% low", s)
	}
}

// TestSteadyOfDocument: the window's seconds only are judged, the ramp-up
// comes from the config, and runs of a fixed amount of work, or of too
// few completions, have none.
func TestSteadyOfDocument(t *testing.T) {
	d := &Document{Config: map[string]any{"rampup": "4s", "duration": "30s"}}
	for i := range 4 {
		d.Series = append(d.Series, Point{T: float64(i + 1), Phase: "ramp-up", Counts: []int64{int64(10 * i), 1}})
	}
	for i := range 30 {
		d.Series = append(d.Series, Point{T: float64(i + 5), Phase: "measure", Counts: []int64{99, 1}})
	}
	d.Series = append(d.Series, Point{T: 35, Phase: "done", Counts: []int64{3, 0}})
	s := d.SteadyState()
	if s == nil || s.Verdict != SteadyOK || s.Seconds != 30 || s.Rampup != 4 || s.Truncated != 0 {
		t.Fatalf("steady state %+v, want steady over 30 s after a 4 s ramp-up", s)
	}
	d.Steady = &Steady{Verdict: SteadyTrend}
	if d.SteadyState() != d.Steady {
		t.Error("a recorded steady state is not the one read")
	}
	d.Steady = nil
	for i := range d.Series {
		d.Series[i].Counts = []int64{0, 0}
	}
	if s := d.SteadyState(); s != nil {
		t.Errorf("no completions: %+v, want none", s)
	}
	if s := (&Document{Config: map[string]any{"loops": 1}}).SteadyState(); s != nil {
		t.Errorf("fixed work: %+v, want none", s)
	}
}

// TestSteadyBrokenWindow: a window with a stall or an outage in it is not
// steady, whatever MSER-5 would make of its seconds, and no ramp-up is
// suggested from it; one before the window leaves the verdict to MSER-5.
// The series is the probe's: a few healthy seconds, then none while the
// server was frozen, then healthy again, which MSER-5 alone read as a
// warm-up, steady after it, and advised a longer --rampup for.
func TestSteadyBrokenWindow(t *testing.T) {
	doc := func() *Document {
		d := &Document{Config: map[string]any{"rampup": "5s", "duration": "60s"}}
		for i := range 5 {
			d.Series = append(d.Series, Point{T: float64(i + 1), Phase: "ramp-up", Counts: []int64{int64(200 * i)}})
		}
		for i, x := range noisy(60, 1000, 30, 3) {
			if i >= 2 && i < 8 {
				x = 0
			}
			d.Series = append(d.Series, Point{T: float64(i + 6), Phase: "measure", Counts: []int64{int64(x)}})
		}
		return d
	}
	for _, c := range []struct {
		name    string
		stalls  []Span
		outages []Span
		verdict string
		line    string
	}{
		{"stall", []Span{{At: 7.2, Seconds: 6.1}}, nil, SteadyStalled,
			"Steady state: not steady: a stall from 7.2 s for 6.1 s; MSER-5 does not judge a window the server broke, and no --rampup would mend it."},
		{"outage", nil, []Span{{At: 7.2, Seconds: 6.1}}, SteadyOutage,
			"Steady state: not steady: an outage from 7.2 s for 6.1 s (no server); MSER-5 does not judge a window the server broke, and no --rampup would mend it."},
		{"two stalls and an outage", []Span{{At: 40, Seconds: 3}, {At: 7.2, Seconds: 6.1}}, []Span{{At: 50, Seconds: 4}}, SteadyStalled,
			"Steady state: not steady: a stall from 7.2 s for 6.1 s, and 2 more stalls or outages; MSER-5 does not judge"},
	} {
		d := doc()
		d.Stalls, d.Outages = c.stalls, c.outages
		s := steadyOf(d)
		if s == nil || s.Verdict != c.verdict || s.SuggestedRampup != 0 || s.Truncated != 0 {
			t.Errorf("%s: %+v, want verdict %q and no truncation or ramp-up suggested", c.name, s, c.verdict)
			continue
		}
		if !strings.HasPrefix(s.Line(), c.line) {
			t.Errorf("%s: line %q, want it to start %q", c.name, s.Line(), c.line)
		}
		// A document recorded before stalls were judged is judged again.
		d.Steady = &Steady{Verdict: SteadyOK, Truncated: 25, SuggestedRampup: 30}
		if got := d.SteadyState(); got.Verdict != c.verdict {
			t.Errorf("%s: a recorded steady verdict over a broken window read back as %q, want %q", c.name, got.Verdict, c.verdict)
		}
	}
	// A stall in the ramp-up, before the window, is not the window's.
	d := doc()
	d.Series = d.Series[:5]
	for i, x := range noisy(60, 1000, 30, 3) {
		d.Series = append(d.Series, Point{T: float64(i + 6), Phase: "measure", Counts: []int64{int64(x)}})
	}
	d.Stalls = []Span{{At: 0.5, Seconds: 3.5}}
	if s := steadyOf(d); s == nil || s.Verdict != SteadyOK {
		t.Errorf("a stall before the window: %+v, want steady", s)
	}
}
