package report

import (
	"fmt"
	"slices"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// Shades of what happened to the server, on time charts.
const (
	outageShade = "rgba(192, 57, 43, 0.18)"
	stallShade  = "rgba(230, 126, 34, 0.22)"
	gapShade    = "rgba(120, 130, 145, 0.22)"
)

// faultMarks adds to a time chart's plugins what happened to the server:
// the events as dashed lines, the stretches without a server and the
// stalls as shaded bands; it returns the caption's sentence for them, ""
// for a quiet run.
func faultMarks(d *result.Document, plugins obj) string {
	var spans []obj
	for _, o := range d.Outages {
		spans = append(spans, obj{"from": o.At, "to": o.At + o.Seconds, "label": "no server", "color": outageShade})
	}
	for _, s := range d.Stalls {
		spans = append(spans, obj{"from": s.At, "to": s.At + s.Seconds, "label": "stall", "color": stallShade})
	}
	caption := ""
	if len(d.Events) > 0 {
		var marks []obj
		for _, e := range d.Events {
			marks = append(marks, obj{"at": e.T, "label": e.What})
		}
		plugins["eventMarks"] = obj{"marks": marks}
		caption += " Dashed lines: what was done to the system under test (see Reliability)."
	}
	if len(d.Outages) > 0 {
		caption += " Shaded red: no server."
	}
	if len(d.Stalls) > 0 {
		caption += " Shaded orange: a stall, nothing ended while virtual users waited."
	}
	if len(spans) > 0 {
		plugins["spanShade"] = obj{"spans": spans}
	}
	return caption
}

// gapMarks adds to a telemetry chart's plugins the stretches in which the
// database could not be read; it returns the caption's sentence for them.
func gapMarks(rec *telemetry.Recording, plugins obj) string {
	if len(rec.Gaps) == 0 {
		return ""
	}
	var spans []obj
	for _, g := range rec.Gaps {
		label := "no database telemetry"
		if g.ServerPID > 0 {
			label += fmt.Sprintf(", then server pid %d", g.ServerPID)
		}
		spans = append(spans, obj{"from": g.From, "to": g.To, "label": label, "color": gapShade})
	}
	plugins["spanShade"] = obj{"spans": spans}
	return " Gray bands: the database could not be read (its server down or restarting); after a restart the host follows the server's new process."
}

// gapLines say where a run's telemetry has gaps, for the Reliability
// section.
func gapLines(rec *telemetry.Recording) []string {
	if rec == nil {
		return nil
	}
	var lines []string
	for _, g := range rec.Gaps {
		l := fmt.Sprintf("Telemetry: no database readings from %.1f s to %.1f s", g.From, g.To)
		if g.ServerPID > 0 {
			l += fmt.Sprintf("; the host follows the server's new process, pid %d, from then on", g.ServerPID)
		}
		lines = append(lines, l)
	}
	return lines
}

// latencySeriesBlock charts each second's latency percentiles over the
// run, with what happened to the server marked; false for a document
// whose series has none (older documents).
// waitLine is the p95 of each second's waits for a session, of a
// pooled run: a gap where none completed.
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

func latencySeriesBlock(p *page, d *result.Document) (block, bool) {
	if !slices.ContainsFunc(d.Series, func(pt result.Point) bool { return pt.Latency != nil }) {
		return block{}, false
	}
	var p50, p95, p99, top []obj
	for _, pt := range d.Series {
		if pt.Latency == nil {
			// A second without a completion is a gap in the lines.
			for _, s := range []*[]obj{&p50, &p95, &p99, &top} {
				*s = append(*s, obj{"x": pt.T, "y": nil})
			}
			continue
		}
		l := pt.Latency
		p50 = append(p50, obj{"x": pt.T, "y": l.P50})
		p95 = append(p95, obj{"x": pt.T, "y": l.P95})
		p99 = append(p99, obj{"x": pt.T, "y": l.P99})
		top = append(top, obj{"x": pt.T, "y": l.Max})
	}
	maxLine := seriesLine("max", "#8a8f98", top)
	maxLine["borderDash"] = []int{3, 3}
	sets := []obj{seriesLine("p50", color(0), p50), seriesLine("p95", color(1), p95), seriesLine("p99", color(2), p99), maxLine}
	caption := "Figure 2b: the latency of the transactions completed in each second, all types, client side (ms, log scale); a gap is a second in which none completed."
	if d.Sessions != nil {
		sets = append(sets, waitLine(d))
		caption += fmt.Sprintf(" The wait for a session (p95, dashed) is part of the latency: %d terminals shared %d sessions.", d.Sessions.Terminals, d.Sessions.Sessions)
	}
	plugins := obj{}
	caption += faultMarks(d, plugins)
	scales := obj{"y": obj{"type": "logarithmic", "title": axisTitle("ms (log scale)")}}
	ref := timeChart(p, "latency per second", "Latency per second", sets, scales, plugins)
	return block{Heading: "Latency over time", Charts: []chartRef{ref}, ChartCaption: caption}, true
}
