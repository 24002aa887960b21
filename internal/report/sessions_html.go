package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/result"
)

// poolTooSmall is in the note the driver's verdict on a pool too small
// writes (driver.Pool.Verdict), which the sessions block shows.
const poolTooSmall = "need a larger pool"

// isPoolVerdict tells the verdict on a pool too small among a
// document's notes.
func isPoolVerdict(note string) bool { return strings.Contains(note, poolTooSmall) }

// sessionsBlock is a pooled run's sessions (--connections): how many
// terminals shared how many sessions, how busy those were, the wait for
// one, second by second where the series has it, and the verdict on a
// pool too small; false for a run with a session per virtual user.
func sessionsBlock(p *page, d *result.Document) (block, bool) {
	s := d.Sessions
	if s == nil {
		return block{}, false
	}
	b := block{Heading: "Sessions", ID: "sessions"}
	b.Notes = slices.DeleteFunc(slices.Clone(d.Notes), func(n string) bool { return !isPoolVerdict(n) })
	w := s.Wait
	b.KV = []kvGroup{
		{fmt.Sprintf("%d terminals over %s", s.Terminals, sessionCount(s.Sessions)), [][2]string{
			{"sessions in use, p95", fmt.Sprintf("%d of %d", s.InUseP95, s.Sessions)},
			{"sessions in use, max", fmt.Sprintf("%d of %d", s.InUseMax, s.Sessions)},
			{"all in use", fmt.Sprintf("%.0f%% of the window", 100*s.AllInUse)},
			{"terminals queued, p95", strconv.Itoa(s.QueuedP95)},
			{"terminals queued, max", strconv.Itoa(s.QueuedMax)},
		}},
		{"Wait for a session, ms", [][2]string{
			{"mean", ms(w.Mean)}, {"p50", ms(w.P50)}, {"p90", ms(w.P90)},
			{"p95", ms(w.P95)}, {"p99", ms(w.P99)}, {"max", ms(w.Max)},
		}},
	}
	b.KVCaption = "Over the measured window: sessions in use and terminals queued for one sampled 100 times a second; the wait of each completed transaction for its session, which its response time includes."
	if len(d.Series) < 3 || !slices.ContainsFunc(d.Series, func(pt result.Point) bool { return pt.Wait != nil }) {
		return b, true
	}
	plugins := obj{}
	caption := "Figure 3b: the wait for a session of the transactions completed in each second, all types (ms, log scale); a gap is a second in which none completed."
	if ramp := rampEnd(d.Series); ramp > 0 {
		plugins["rampShade"] = obj{"until": ramp, "label": "ramp-up"}
		caption += " Shaded: the ramp-up."
	}
	caption += faultMarks(d, plugins)
	scales := obj{"y": obj{"type": "logarithmic", "title": axisTitle("ms (log scale)")}}
	b.Charts = []chartRef{timeChart(p, "wait for a session per second", "Wait for a session per second", percentileLines(d.Series, true), scales, plugins)}
	b.ChartCaption = caption
	return b, true
}

// sessionCount is "1 session", "20 sessions".
func sessionCount(n int) string {
	if n == 1 {
		return "1 session"
	}
	return fmt.Sprintf("%d sessions", n)
}

// rampEnd is when the series' ramp-up ends, 0 without one.
func rampEnd(series []result.Point) float64 {
	end := 0.0
	for _, pt := range series {
		if pt.Phase == "ramp-up" {
			end = pt.T
		}
	}
	return end
}

// waitLine is the p95 of each second's waits for a session, of a
// pooled run, for the latency chart: a gap where none completed.
func waitLine(d *result.Document) obj {
	var wait []obj
	for _, pt := range d.Series {
		var y any
		if pt.Wait != nil {
			y = pt.Wait.P95
		}
		wait = append(wait, obj{"x": pt.T, "y": y})
	}
	line := seriesLine("session wait p95", color(3), wait)
	line["borderDash"] = []int{6, 3}
	return line
}

// sessionsGroup compares two runs' pools, where either had one: how busy
// the sessions were, as shares of each pool since the pools' sizes may
// differ (they are in the configuration), and how long terminals waited.
// Every figure is better lower: the pool was less busy, terminals waited
// less.
func sessionsGroup(a, b *result.Document) (CompareGroup, bool) {
	if a.Sessions == nil && b.Sessions == nil {
		return CompareGroup{}, false
	}
	g := CompareGroup{Name: "sessions (--connections)"}
	for _, m := range []struct {
		name  string
		f     func(*result.Sessions) float64
		count bool
	}{
		{"in_use_p95_pct", func(s *result.Sessions) float64 { return 100 * float64(s.InUseP95) / float64(max(s.Sessions, 1)) }, false},
		{"queued_p95", func(s *result.Sessions) float64 { return float64(s.QueuedP95) }, true},
		{"all_in_use_pct", func(s *result.Sessions) float64 { return 100 * s.AllInUse }, false},
		{"wait_p90_ms", func(s *result.Sessions) float64 { return s.Wait.P90 }, false},
		{"wait_p99_ms", func(s *result.Sessions) float64 { return s.Wait.P99 }, false},
	} {
		val := func(s *result.Sessions) float64 {
			if s == nil {
				return math.NaN()
			}
			return m.f(s)
		}
		g.Rows = append(g.Rows, CompareRow{Metric: m.name, A: val(a.Sessions), B: val(b.Sessions), LowerIsBetter: true, Count: m.count})
	}
	return g, true
}
