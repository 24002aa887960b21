package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
)

// metricStats are a metric's figures, a stat for each side, the side
// that stands for it first (result.Metric.Side): the client's where other
// clients' work swelled the database's.
func metricStats(m result.Metric) []stat {
	var out []stat
	if m.DB != nil {
		out = append(out, stat{m.Label + " (database)", fmtValue(*m.DB)})
	}
	if m.Client != nil {
		out = append(out, stat{m.Label + " (client)", fmtValue(*m.Client)})
	}
	if len(out) == 2 && m.Side() == result.SideClient {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// runPage is a single run: configuration, throughput over time, latency
// per transaction type and the mix audit.
func runPage(d *result.Document) *page {
	p := &page{Title: fmt.Sprintf("dbrig %s run", d.Workload)}
	p.Subtitle = append(p.Subtitle, fmt.Sprintf("%s · started %s · %.1f s measured",
		d.Target.Server(), d.StartedAt.UTC().Format("2006-01-02 15:04:05 MST"), d.WindowSeconds))
	if l := errorRateLine(d); l != "" {
		p.Failures = append(p.Failures, l)
	}
	if d.Interrupted {
		p.Subtitle = append(p.Subtitle, "Interrupted: the figures cover only the window measured before the stop.")
	}
	if l := lostLine(d); l != "" {
		p.Failures = append(p.Failures, l)
	}
	if d.Part != nil {
		p.Subtitle = append(p.Subtitle, d.Part.Note())
	}
	for _, m := range ordered(d) {
		p.Stats = append(p.Stats, metricStats(m)...)
	}

	var cfg [][2]string
	flatten("", d.Config, &cfg)
	p.Blocks = append(p.Blocks, kvBlock("Configuration", []kvGroup{
		{"System under test", hostRows(d.Host, d.Target)},
		{"Workload " + d.Workload, cfg},
	}, "Figure 1: the system under test and the workload's parameters, as recorded in the result document."))
	p.Blocks = append(p.Blocks, partBlocks(d)...)
	if b, ok := verdictBlock(p, d); ok {
		p.Blocks = append(p.Blocks, b)
	}

	if b, ok := seriesBlock(p, d); ok {
		p.Blocks = append(p.Blocks, b)
	}
	if b, ok := steadyBlock(d); ok {
		p.Blocks = append(p.Blocks, b)
	}
	if b, ok := latencySeriesBlock(p, d); ok {
		p.Blocks = append(p.Blocks, b)
	}
	p.Blocks = append(p.Blocks, latencyBlock(p, d))
	if b, ok := sessionsBlock(p, d); ok {
		p.Blocks = append(p.Blocks, b)
	}
	if len(d.Lines) > 0 {
		p.Blocks = append(p.Blocks, block{Heading: "Summary", Pre: strings.Join(d.Lines, "\n")})
	}
	if len(d.Audit) > 0 {
		p.Blocks = append(p.Blocks, block{Heading: auditHead(d.Audit), Table: auditTable(d.Audit)})
	}
	if b, ok := thresholdsBlock(d); ok {
		p.Blocks = append(p.Blocks, b)
	}
	// The verdict on a pool too small is the sessions block's, a part's
	// note the subtitle's.
	elsewhere := func(l string) bool { return isPoolVerdict(l) || d.Part != nil && l == d.Part.Note() }
	if lines := slices.DeleteFunc(reliabilityLines(d), elsewhere); len(lines) > 0 {
		p.Blocks = append(p.Blocks, block{Heading: "Reliability", Notes: lines})
	}
	if len(d.Counters) > 0 {
		var rows [][2]string
		flatten("", countersAny(d.Counters), &rows)
		p.Blocks = append(p.Blocks, kvBlock("Counters", []kvGroup{{"Workload counters over the measured window", rows}}, ""))
	}
	p.Blocks = append(p.Blocks, explainHTML(p, d)...)
	return p
}

func countersAny(m map[string]int64) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// seriesBlock charts the per-second series as per-minute rates: the
// primary transaction's completions × 60 and all completions × 60. The
// ramp-up is shaded.
func seriesBlock(p *page, d *result.Document) (block, bool) {
	// A run of a few long transactions (the CPU test's loops) has no
	// throughput to draw second by second.
	var completed int64
	for _, pt := range d.Series {
		for _, c := range pt.Counts {
			completed += c
		}
	}
	if len(d.Series) < 3 || completed < int64(len(d.Series)) {
		return block{}, false
	}
	primary := slices.Index(d.SeriesTypes, d.PrimaryTx)
	var prim, all, errs, doubts []obj
	for _, pt := range d.Series {
		var sum int64
		for _, c := range pt.Counts {
			sum += c
		}
		all = append(all, obj{"x": pt.T, "y": sum * 60})
		errs = append(errs, obj{"x": pt.T, "y": pt.Errors})
		doubts = append(doubts, obj{"x": pt.T, "y": pt.InDoubt})
		if primary >= 0 && primary < len(pt.Counts) {
			prim = append(prim, obj{"x": pt.T, "y": pt.Counts[primary] * 60})
		}
	}
	var sets []obj
	if prim != nil && len(d.SeriesTypes) > 1 {
		sets = append(sets, seriesLine(d.PrimaryTx+" per minute", color(0), prim))
	}
	sets = append(sets, seriesLine("all transactions per minute", color(1), all))
	plugins := obj{}
	scales := obj{"y": obj{"beginAtZero": true, "title": axisTitle("per minute")}}
	caption := "Figure 2: completions in each second × 60, client side."
	if ramp := rampEnd(d.Series); ramp > 0 {
		plugins["rampShade"] = obj{"until": ramp, "label": "ramp-up"}
		caption += fmt.Sprintf(" Shaded: the %.0f s ramp-up, not counted in the results.", ramp)
	}
	// What happened to the server, so that the dip and the recovery
	// around it show.
	caption += faultMarks(d, plugins)
	caption += steadyMarks(d, plugins)
	failed := slices.ContainsFunc(d.Series, func(pt result.Point) bool { return pt.Errors > 0 })
	doubted := slices.ContainsFunc(d.Series, func(pt result.Point) bool { return pt.InDoubt > 0 })
	if failed || doubted {
		scales["y1"] = obj{"beginAtZero": true, "position": "right", "title": axisTitle("per second"),
			"grid": obj{"drawOnChartArea": false}}
	}
	if failed {
		e := seriesLine("errors per second", "#c0392b", errs)
		e["yAxisID"] = "y1"
		sets = append(sets, e)
		caption += " Red, on the right-hand scale: transactions that failed in each second, all types."
	}
	if doubted {
		e := seriesLine("in doubt per second", "#8e44ad", doubts)
		e["yAxisID"], e["borderDash"] = "y1", []int{4, 3}
		sets = append(sets, e)
		caption += " Purple, dashed, on the right-hand scale: transactions in doubt in each second, their commit unanswered."
	}
	ref := timeChart(p, "throughput over time", "Throughput per second, as a per-minute rate", sets, scales, plugins)
	return block{Heading: "Throughput", Charts: []chartRef{ref}, ChartCaption: caption}, true
}

// seriesLine is one unfilled series of a time chart.
func seriesLine(label, c string, data []obj) obj {
	return obj{"label": label, "data": data, "borderColor": c, "backgroundColor": c,
		"borderWidth": 1.5, "pointRadius": 0, "pointHitRadius": 6, "tension": 0}
}

func latencyBlock(p *page, d *result.Document) block {
	doubt := inDoubt(d) > 0
	head := []string{"transaction", "#count", "#per min", "#errors"}
	if doubt {
		head = append(head, "#in doubt")
	}
	head = append(head, "#retries")
	retried := result.Retried(d)
	if retried {
		head = append(head, "#aborts", "#retrying %")
	}
	t := &table{Class: "wide", Head: heads(append(head, "#mean ms", "#p50 ms", "#p90 ms", "#p95 ms", "#p99 ms", "#max ms")...)}
	var names []string
	pcts := [4][]float64{}
	for _, x := range d.Transactions {
		l := x.Latency
		cells := []cell{{Text: x.Name}, num(strconv.FormatInt(x.Count, 10)), num(human.Thousands(x.PerMinute)), errCell(x.Errors, x.ErrorSample)}
		if doubt {
			cells = append(cells, errCell(x.InDoubt, inDoubtTitle))
		}
		cells = append(cells, num(strconv.FormatInt(x.Retries, 10)))
		if retried {
			cells = append(cells, errCell(x.Aborts, abortTitle), num(fmt.Sprintf("%.1f", 100*x.RetryShare())))
		}
		t.Rows = append(t.Rows, row{ID: "tx-" + x.Name, Cells: append(cells,
			num(ms(l.Mean)), num(ms(l.P50)), num(ms(l.P90)), num(ms(l.P95)), num(ms(l.P99)), num(ms(l.Max)))})
		names = append(names, x.Name)
		for i, v := range []float64{l.P50, l.P90, l.P95, l.P99} {
			pcts[i] = append(pcts[i], v)
		}
	}
	t.Caption = "Latency over the measured window, per transaction type (HdrHistogram, client side). Hover an error count for a sample message."
	if doubt {
		t.Caption += " In doubt: " + inDoubtTitle + "."
	}
	if retried {
		t.Caption += " Aborts: " + abortTitle + ". Retrying: the share of the completed and failed transactions' time spent in attempts that failed and the backoffs after them (a latency runs from the first attempt)."
	}
	b := block{Heading: "Latency", Table: t}
	if len(names) > 0 {
		var sets []obj
		for i, label := range []string{"p50", "p90", "p95", "p99"} {
			sets = append(sets, obj{"label": label, "data": pcts[i], "backgroundColor": color(i), "borderWidth": 0})
		}
		b.Charts = []chartRef{p.addChart("latency percentiles per transaction type", false, obj{
			"type": "bar",
			"data": obj{"labels": names, "datasets": sets},
			"options": obj{
				"scales": obj{"y": obj{"type": "logarithmic", "title": axisTitle("ms (log scale)")}},
				"plugins": obj{
					"title":   chartTitle("Latency percentiles per transaction type"),
					"tooltip": obj{"mode": "index", "intersect": false},
				},
			},
		})}
		b.ChartCaption = "Figure 3: latency percentiles in ms; the scale is logarithmic so that fast and slow types both show."
	}
	return b
}

func errCell(n int64, sample string) cell {
	c := num(strconv.FormatInt(n, 10))
	if n > 0 {
		c.Class = "num bad"
		c.Title = sample
	}
	return c
}

func auditTable(items []result.AuditItem) *table {
	t := &table{Head: heads("check", "#value", "#allowed", "result", "note"),
		Caption: "The run checked against the workload's own bounds, over the measured window."}
	for _, a := range items {
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: a.Name}, num(fmt.Sprintf("%.2f%%", a.Value)),
			num(fmt.Sprintf("%.2f–%.2f%%", a.Low, a.High)), {Text: a.Result, Class: strings.ToLower(a.Result)}, {Text: a.Reason}}})
	}
	return t
}
