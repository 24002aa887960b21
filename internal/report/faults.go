package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// Shades of what happened to the server, on time charts.
const (
	outageShade = "rgba(192, 57, 43, 0.18)"
	stallShade  = "rgba(230, 126, 34, 0.22)"
	gapShade    = "rgba(120, 130, 145, 0.22)"
	// actionShade is an action's outage: no transaction completed.
	actionShade = "rgba(142, 68, 173, 0.18)"
)

// faultMarks adds to a time chart's plugins what happened to the server:
// the events as dashed lines, the stretches without a server, the stalls
// and the outages around actions as shaded bands; it returns the
// caption's sentence for them, "" for a quiet run.
func faultMarks(d *result.Document, plugins obj) string {
	var spans []obj
	for _, a := range d.ActionOutages {
		spans = append(spans, obj{"from": a.Outage.At, "to": a.Outage.At + a.Outage.Seconds, "label": "no transaction completed", "color": actionShade})
	}
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
			marks = append(marks, obj{"at": e.T, "label": markLabel(e.What)})
		}
		plugins["eventMarks"] = obj{"marks": marks}
		caption += " Dashed lines: what was done to the system under test (see Reliability)."
	}
	if len(d.ActionOutages) > 0 {
		caption += " Shaded purple: the outage around an action, in which no transaction completed (each virtual user's in Reliability)."
	}
	if len(d.Outages) > 0 {
		caption += " Shaded red: no server."
	}
	if len(d.Stalls) > 0 {
		caption += " Shaded orange: a stall, nothing ended while virtual users waited."
	}
	shade(plugins, spans)
	return caption
}

// markLabel is an event's words as its mark on a chart shows them: up to
// its first colon, comma or parenthesis ("node1 lost", "server killed"),
// the rest of it in the Reliability section, so that marks near each other
// stay apart.
func markLabel(what string) string {
	cut := len(what)
	for _, sep := range []string{": ", ", ", " ("} {
		if i := strings.Index(what, sep); i > 0 && i < cut {
			cut = i
		}
	}
	return what[:cut]
}

// shade adds spans to the stretches a time chart shades: what happened
// to the server and the telemetry's gaps may share a chart.
func shade(plugins obj, spans []obj) {
	if len(spans) == 0 {
		return
	}
	if s, ok := plugins["spanShade"].(obj); ok {
		s["spans"] = append(s["spans"].([]obj), spans...)
		return
	}
	plugins["spanShade"] = obj{"spans": spans}
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
	shade(plugins, spans)
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
func latencySeriesBlock(p *page, d *result.Document) (block, bool) {
	if !slices.ContainsFunc(d.Series, func(pt result.Point) bool { return pt.Latency != nil }) {
		return block{}, false
	}
	sets := percentileLines(d.Series, false)
	caption := "Figure 2b: the latency of the transactions completed in each second, all types, client side (ms, log scale); a gap is a second in which none completed."
	if d.Sessions != nil {
		sets = append(sets, waitLine(d))
		caption += fmt.Sprintf(" The wait for a session (p95, dashed) is part of the latency: %d terminals shared %s.", d.Sessions.Terminals, sessionCount(d.Sessions.Sessions))
	}
	plugins := obj{}
	caption += faultMarks(d, plugins)
	scales := obj{"y": obj{"type": "logarithmic", "title": axisTitle("ms (log scale)")}}
	ref := timeChart(p, "latency per second", "Latency per second", sets, scales, plugins)
	return block{Heading: "Latency over time", Charts: []chartRef{ref}, ChartCaption: caption}, true
}

// percentileLines are the p50, p95, p99 and max lines of each second's
// latency, or of its waits for a session (wait); a second without one
// (none completed, or none waited) is a gap in the lines.
func percentileLines(series []result.Point, wait bool) []obj {
	var lines [4][]obj
	for _, pt := range series {
		l := pt.Latency
		if wait {
			l = pt.Wait
		}
		for i := range lines {
			var y any
			if l != nil {
				y = [4]float64{l.P50, l.P95, l.P99, l.Max}[i]
			}
			lines[i] = append(lines[i], obj{"x": pt.T, "y": y})
		}
	}
	top := seriesLine("max", "#8a8f98", lines[3])
	top["borderDash"] = []int{3, 3}
	return []obj{seriesLine("p50", color(0), lines[0]), seriesLine("p95", color(1), lines[1]), seriesLine("p99", color(2), lines[2]), top}
}
