package result

import (
	"fmt"
	"math"
	"time"
)

// Steady is whether a run's measured window had settled: MSER-5's
// truncation point over the window's completions per second, and a test
// for a trend in what it keeps. Absent from a run of a fixed amount of
// work, one with less than a completion a second, and older documents
// (SteadyState computes it from their series).
type Steady struct {
	Method string `json:"method"` // "MSER-5"
	// Verdict is SteadyOK, SteadyLate, SteadyTrend or SteadyShort.
	Verdict string `json:"verdict"`
	// Seconds are the window's whole seconds judged; Truncated those MSER-5
	// cuts from its start as warm-up.
	Seconds   int `json:"seconds"`
	Truncated int `json:"truncated_seconds"`
	// BiasPct is the whole window's mean throughput against the mean after
	// the truncation, in %: what averaging the warm-up in cost the figures.
	BiasPct float64 `json:"bias_pct"`
	// DriftPct is the least-squares line's change over the TrendSeconds
	// after the truncation, in % of their mean, with its 95% interval.
	TrendSeconds int     `json:"trend_seconds"`
	DriftPct     float64 `json:"drift_pct"`
	DriftLow     float64 `json:"drift_low_pct"`
	DriftHigh    float64 `json:"drift_high_pct"`
	// Rampup is the run's ramp-up; SuggestedRampup the ramp-up, in whole
	// seconds, that would have left the truncated seconds out of the
	// window (0 where none was truncated).
	Rampup          float64 `json:"rampup_seconds"`
	SuggestedRampup int     `json:"suggested_rampup_seconds,omitempty"`
	// Break is the window's first stall or outage, where the verdict is
	// SteadyStalled or SteadyOutage; Breaks counts every one in it.
	Break  *Span `json:"break,omitempty"`
	Breaks int   `json:"breaks,omitempty"`
}

// Steady's verdicts.
const (
	// SteadyOK: MSER-5 truncates at most half the window, and what it
	// keeps has no material trend.
	SteadyOK = "steady"
	// SteadyLate: MSER-5's truncation point is past half the window, its
	// own sign that the series never settled.
	SteadyLate = "not settled"
	// SteadyTrend: what MSER-5 keeps still trends.
	SteadyTrend = "trending"
	// SteadyShort: too few seconds for MSER-5's batches to judge.
	SteadyShort = "too short"
	// SteadyStalled and SteadyOutage: a stall, or a stretch without a
	// server, in the window. Its throughput was broken, not unsettled,
	// and MSER-5 is not asked: it reads the healthy seconds on one side
	// of the break as a warm-up, and would advise a ramp-up that mends
	// nothing.
	SteadyStalled = "stalled"
	SteadyOutage  = "server out"
)

const (
	// mserBatch is MSER-5's batch: the means of 5 consecutive seconds,
	// which smooths the per-second noise that misleads MSER on raw data
	// (White, Cobb & Spratt 2000).
	mserBatch = 5
	// minBatches is the fewest batches judged: 20 s.
	minBatches = 4
	// materialShift is the change in throughput, in % of the mean, below
	// which neither a trend, however significant, nor a late truncation
	// makes a window unsteady: a drift of 5% over the window leaves its
	// mean within 2.5% of every stretch of it, inside the spread of
	// repeated runs on a shared host.
	materialShift = 5.0
)

// SteadyState is d's steady state: the one recorded, else computed from
// its series (a document from before it was recorded, or from before a
// stall or an outage in the window made it unsteady); nil where there is
// nothing to judge.
func (d *Document) SteadyState() *Steady {
	if s := d.Steady; s != nil && (s.Break != nil || d.windowBreak(window(d)) == nil) {
		return s
	}
	return steadyOf(d)
}

// steadyOf judges the measured window of d's series, the seconds of phase
// "measure". The ramp-up's seconds are in the series too, but its virtual
// users start one by one, so it rises by design: judged with the window,
// MSER-5 would spend its truncation on a ramp everyone knows of, and the
// half-the-series rule would move with the ramp-up's length. The question
// is whether what was averaged was steady: the window alone.
func steadyOf(d *Document) *Steady {
	rampup, timed := rampupOf(d)
	if !timed {
		return nil
	}
	xs, from, to := window(d)
	if s := d.windowBreak(xs, from, to); s != nil {
		s.Rampup = rampup
		return s
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	// A few long transactions (reports, loops) make a series of counts
	// that says nothing second by second.
	if len(xs) == 0 || sum < float64(len(xs)) {
		return nil
	}
	return judge(xs, rampup)
}

// window is d's measured window: its completions per second, and its
// start and end on the series' clock (a point's second ends at its T).
func window(d *Document) (xs []float64, from, to float64) {
	for _, p := range d.Series {
		if p.Phase != "measure" {
			continue
		}
		if len(xs) == 0 {
			from = p.T - 1
		}
		to = p.T
		var n int64
		for _, c := range p.Counts {
			n += c
		}
		xs = append(xs, float64(n))
	}
	return xs, from, to
}

// windowBreak is the verdict on the window of seconds xs, from from to
// to, where a stall or an outage overlaps it; nil where none does.
func (d *Document) windowBreak(xs []float64, from, to float64) *Steady {
	var first Span
	verdict, n := "", 0
	for _, b := range []struct {
		spans   []Span
		verdict string
	}{{d.Stalls, SteadyStalled}, {d.Outages, SteadyOutage}} {
		for _, s := range b.spans {
			if len(xs) == 0 || s.At >= to || s.At+s.Seconds <= from {
				continue
			}
			if n++; verdict == "" || s.At < first.At {
				first, verdict = s, b.verdict
			}
		}
	}
	if n == 0 {
		return nil
	}
	return &Steady{Method: "MSER-5", Verdict: verdict, Seconds: len(xs), Break: &first, Breaks: n}
}

// rampupOf is d's ramp-up in seconds, from its configuration; timed is
// false for a run of a fixed amount of work, which has no window to
// settle in.
func rampupOf(d *Document) (seconds float64, timed bool) {
	if _, ok := d.Config["duration"]; !ok {
		return 0, false
	}
	s, _ := d.Config["rampup"].(string)
	r, err := time.ParseDuration(s)
	if err != nil {
		return 0, true
	}
	return r.Seconds(), true
}

// judge is the steady state of the window's completions per second xs,
// after a ramp-up of rampup seconds.
//
// MSER-5's own rule reads a truncation point past half the series as no
// steady state. On a window of a minute, 12 batches, that rule alone
// fires on about a quarter of series that are only noise (simulated with
// a per-second spread of 5-10% and neighbouring seconds correlated, as
// dbrig's tproc-c series are), since the statistic is erratic over the
// last few batches. So a late truncation counts only where the seconds it
// cuts move the window's mean by materialShift or more (a ramp over two
// thirds of the window is still caught nine times in ten); a smaller one
// is noise, and the trend is tested over the whole window. Of a minute's
// noise, 2% of series are still judged late and 5.5% trending
// (TestMSERNoise): a single run's verdict is a prompt to look at its
// chart, a sweep's repetitions tell more.
func judge(xs []float64, rampup float64) *Steady {
	s := &Steady{Method: "MSER-5", Seconds: len(xs), Rampup: rampup}
	batches := batchMeans(xs, mserBatch)
	if len(batches) < minBatches {
		s.Verdict = SteadyShort
		return s
	}
	d := mser(batches)
	s.Truncated = d * mserBatch
	if kept := Mean(xs[s.Truncated:]); kept != 0 {
		s.BiasPct = 100 * (Mean(xs)/kept - 1)
	}
	late := 2*d > len(batches)
	if late && math.Abs(s.BiasPct) < materialShift {
		d = 0
	} else if s.Truncated > 0 {
		s.SuggestedRampup = int(math.Ceil(rampup + float64(s.Truncated)))
	}
	s.TrendSeconds = (len(batches) - d) * mserBatch
	s.DriftPct, s.DriftLow, s.DriftHigh = drift(batches[d:])
	switch {
	case late && d > 0:
		s.Verdict = SteadyLate
	case (s.DriftLow > 0 || s.DriftHigh < 0) && math.Abs(s.DriftPct) >= materialShift:
		s.Verdict = SteadyTrend
	default:
		s.Verdict = SteadyOK
	}
	return s
}

// batchMeans are the means of xs's consecutive batches of size k; the
// seconds after the last whole batch are left out, as MSER-5 does.
func batchMeans(xs []float64, k int) []float64 {
	out := make([]float64, 0, len(xs)/k)
	for i := 0; i+k <= len(xs); i += k {
		out = append(out, Mean(xs[i:i+k]))
	}
	return out
}

// mser is MSER's truncation point over the batch means ys, in batches:
// the d that minimizes the marginal standard error of the mean of what
// is left, Σ_{i≥d}(y_i - ȳ_d)² / (n-d)² (White 1997, "An effective
// truncation heuristic for bias reduction in simulation output",
// Simulation 69(6); on batches of 5, MSER-5: White, Cobb & Spratt 2000,
// "A comparison of five steady-state truncation heuristics for
// simulation", Proc. Winter Simulation Conference; the best of the
// warm-up methods Hoad, Robinson & Davies 2010 compared, "Automating
// warm-up length estimation", J. Operational Research Society 61(9)).
// The statistic falls to 0 as the last few batches are all that is left,
// which is no evidence of anything, so the last quarter of the batches
// (at least 2) are never a candidate; a minimum past half the series is
// the caller's to read as "no steady state".
func mser(ys []float64) int {
	n := len(ys)
	last := n - max(2, n/4)
	// Sums from the end, so that each d's statistic takes O(1).
	var s, sq float64
	stat := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s += ys[i]
		sq += ys[i] * ys[i]
		m := float64(n - i)
		stat[i] = (sq - s*s/m) / (m * m)
	}
	best := 0
	for d := 1; d <= last; d++ {
		// Strictly less: of equal statistics, the earliest truncation.
		if stat[d] < stat[best]-1e-12*math.Abs(stat[best]) {
			best = d
		}
	}
	return best
}

// drift is the least-squares line through the batch means ys: its change
// over them, in % of their mean, with the 95% interval of its slope
// (Student's t, n-2 degrees of freedom). A slope whose interval excludes
// 0 is a trend (the regression test on batch means of Kelton & Law 1983,
// "A new approach for dealing with the startup problem in discrete event
// simulation", Naval Research Logistics Quarterly 30(4)); batches, not
// seconds, because neighbouring seconds are correlated and would make the
// interval too narrow.
func drift(ys []float64) (pct, low, high float64) {
	n := len(ys)
	mean := Mean(ys)
	if n < 3 || mean == 0 {
		return 0, 0, 0
	}
	xm := float64(n-1) / 2
	var sxx, sxy float64
	for i, y := range ys {
		sxx += (float64(i) - xm) * (float64(i) - xm)
		sxy += (float64(i) - xm) * (y - mean)
	}
	b := sxy / sxx
	var sse float64
	for i, y := range ys {
		r := y - mean - b*(float64(i)-xm)
		sse += r * r
	}
	half := TQuantile975(float64(n-2)) * math.Sqrt(sse/float64(n-2)/sxx)
	scale := 100 * float64(n) / math.Abs(mean)
	return b * scale, (b - half) * scale, (b + half) * scale
}

// Line says in a sentence whether the window was steady and what ramp-up
// would have made it so.
func (s *Steady) Line() string {
	const head = "Steady state: "
	switch s.Verdict {
	case SteadyStalled, SteadyOutage:
		return head + "not steady: " + s.breakSpan() + "; MSER-5 does not judge a window the server broke, and no --rampup would mend it."
	case SteadyShort:
		return head + fmt.Sprintf("not judged: the window's %d s are fewer than MSER-5's %d batches of %d s.",
			s.Seconds, minBatches, mserBatch)
	case SteadyLate:
		return head + fmt.Sprintf("not steady: MSER-5 truncates %d s of %d, past half the window, and they move its mean by %+.1f%%, so throughput had not settled; --rampup %ds or longer, or a longer --duration, would show whether it does.",
			s.Truncated, s.Seconds, s.BiasPct, s.SuggestedRampup)
	case SteadyTrend:
		return head + fmt.Sprintf("not steady: throughput still trending, %+.1f%% over %s (95%% interval %+.1f%% to %+.1f%%); a longer --rampup does not end a trend, a longer --duration shows whether it does.%s",
			s.DriftPct, s.trendSpan(), s.DriftLow, s.DriftHigh, s.truncation())
	case SteadyOK:
		switch {
		case s.Truncated == 0:
			return head + fmt.Sprintf("steady over the whole window: MSER-5 truncates none of its %d s.", s.Seconds)
		case s.SuggestedRampup == 0:
			return head + fmt.Sprintf("steady within noise: MSER-5's truncation point, second %d of %d, is past half the window, but the seconds before it move the mean by only %+.1f%%.",
				s.Truncated, s.Seconds, s.BiasPct)
		}
		return head + fmt.Sprintf("steady from second %d of %d.%s", s.Truncated, s.Seconds, s.truncation())
	}
	return ""
}

// breakSpan names the window's first stall or outage, and how many
// more it had.
func (s *Steady) breakSpan() string {
	what := fmt.Sprintf("a stall from %.1f s for %.1f s", s.Break.At, s.Break.Seconds)
	if s.Verdict == SteadyOutage {
		what = fmt.Sprintf("an outage from %.1f s for %.1f s (no server)", s.Break.At, s.Break.Seconds)
	}
	switch {
	case s.Breaks == 2:
		what += ", and 1 more stall or outage"
	case s.Breaks > 2:
		what += fmt.Sprintf(", and %d more stalls or outages", s.Breaks-1)
	}
	return what
}

// trendSpan names the seconds the trend was fitted over: the whole
// batches after the truncation.
func (s *Steady) trendSpan() string {
	if s.SuggestedRampup > 0 {
		return fmt.Sprintf("the %d s after MSER-5's truncation", s.TrendSeconds)
	}
	return fmt.Sprintf("the window's %d s", s.TrendSeconds)
}

// truncation says what MSER-5 cut, what that did to the window's mean,
// and the ramp-up that would have left it out.
func (s *Steady) truncation() string {
	if s.SuggestedRampup == 0 {
		return ""
	}
	return fmt.Sprintf(" The first %d s were truncated by MSER-5 (they move the window's mean by %+.1f%%); --rampup %ds would have left them out.",
		s.Truncated, s.BiasPct, s.SuggestedRampup)
}
