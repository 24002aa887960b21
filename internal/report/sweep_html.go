package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// sweepLayout arranges a sweep's points for charts: the first varied
// parameter on the x axis in the matrix's order, one series per
// combination of the others (one per VU level, typically).
type sweepLayout struct {
	x      string   // the x parameter; "" when nothing varied
	xs     []string // its values, in the order the matrix first used them
	series []string // labels of the other parameters' combinations
	// at[s][i] is the point at series s and x value i, or -1.
	at [][]int
}

func layout(s *result.Sweep) sweepLayout {
	l := sweepLayout{}
	if len(s.Varied) > 0 {
		l.x = s.Varied[0]
	}
	xi, si := map[string]int{}, map[string]int{}
	type pos struct{ s, x int }
	var where []pos
	for i, p := range s.Points {
		xv := strconv.Itoa(i + 1)
		if l.x != "" {
			xv = p.Params[l.x]
		}
		if _, ok := xi[xv]; !ok {
			xi[xv] = len(l.xs)
			l.xs = append(l.xs, xv)
		}
		sv := seriesLabel(s.Varied, p.Params)
		if beside := besideNames(s); p.Params["vus"] == "0" && l.x != "vus" && len(beside) > 0 {
			sv += " (" + strings.Join(beside, ", ") + " alone)"
		}
		if _, ok := si[sv]; !ok {
			si[sv] = len(l.series)
			l.series = append(l.series, sv)
		}
		where = append(where, pos{si[sv], xi[xv]})
	}
	l.at = make([][]int, len(l.series))
	for k := range l.at {
		l.at[k] = make([]int, len(l.xs))
		for j := range l.at[k] {
			l.at[k][j] = -1
		}
	}
	for i, w := range where {
		l.at[w.s][w.x] = i
	}
	return l
}

// seriesLabel names a point's combination of the varied parameters after
// the first: "vus=4", or "all points" when only one parameter varied.
func seriesLabel(varied []string, params map[string]string) string {
	if len(varied) < 2 {
		return "all points"
	}
	parts := make([]string, 0, len(varied)-1)
	for _, k := range varied[1:] {
		parts = append(parts, k+"="+params[k])
	}
	return strings.Join(parts, ", ")
}

// paramsLabel names a point by all its parameters, in the spec's order.
func paramsLabel(varied []string, params map[string]string) string {
	return strings.Join(paramsParts(varied, params), " ")
}

// paramsParts are a point's parameters as key=value, in the spec's order.
func paramsParts(varied []string, params map[string]string) []string {
	keys := append([]string(nil), varied...)
	for k := range params {
		if !contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) > len(varied) {
		sort.Strings(keys[len(varied):])
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+params[k])
	}
	return parts
}

// pointTick is a point's label under a chart of every point: a line per
// parameter, and its note on a line of its own. With pointTicks, every
// point keeps its label, level, where one long line would be turned on
// its side into the axis's title, or skipped.
func pointTick(s *result.Sweep, p result.SweepPoint, note string) []string {
	lines := paramsParts(s.Varied, p.Params)
	if note != "" {
		lines = append(lines, "("+note+")")
	}
	return lines
}

// pointTicks is the x axis of a chart of every point, each labelled.
func pointTicks(more obj) obj {
	more["ticks"] = obj{"autoSkip": false, "maxRotation": 0}
	return more
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func isBaseline(s *result.Sweep, i int) bool {
	for _, p := range s.Points {
		if p.BaselinePoint == i {
			return true
		}
	}
	if len(s.Baseline) == 0 {
		return false
	}
	for k, v := range s.Baseline {
		if s.Points[i].Params[k] != v {
			return false
		}
	}
	return true
}

func sweepPage(d *Doc) *page {
	s := d.Sweep
	p := &page{Title: fmt.Sprintf("dbrig sweep: %s", s.Name)}
	runs := len(s.Order)
	p.Subtitle = append(p.Subtitle, fmt.Sprintf("%s on %s · started %s · %d points × %d repeats",
		s.Workload, s.Target.Server(), s.StartedAt.UTC().Format("2006-01-02 15:04:05 MST"), len(s.Points), s.Repeat))
	if !s.Complete {
		p.Subtitle = append(p.Subtitle, fmt.Sprintf("Incomplete: %d of %d runs done; the figures cover those.", s.Done, runs))
	}
	p.Stats = sweepStats(s)

	notes := s.Notes
	if n, _, ok := sweetSpot(s); ok {
		notes = append(slices.Clone(notes), n)
	}
	notes = append(slices.Clone(notes), SweepSteadyLines(s)...)
	if len(notes) > 0 {
		p.Blocks = append(p.Blocks, block{Heading: "Notes", Notes: notes})
	}
	p.Blocks = append(p.Blocks, sweepConfig(d))

	l := layout(s)
	if b, ok := metricsBlock(p, s, l); ok {
		p.Blocks = append(p.Blocks, b)
	}
	if b, ok := gainBlock(p, s, l); ok {
		p.Blocks = append(p.Blocks, b)
	}
	if b, ok := conflictsBlock(p, s); ok {
		p.Blocks = append(p.Blocks, b)
	}
	if b, ok := faultsBlock(p, s, l); ok {
		p.Blocks = append(p.Blocks, b)
	}
	p.Blocks = append(p.Blocks, block{Heading: "Points", Table: pointsTable(s)})
	if b, ok := sweepThresholdsBlock(s); ok {
		p.Blocks = append(p.Blocks, b)
	}
	if t, ok := profileTable(s); ok {
		b := block{Heading: "Why: the host and the database at each point", Table: t}
		var caps []string
		if c, ok := whyChart(p, s); ok {
			c.Wide = true
			b.Charts = append(b.Charts, c)
			caps = append(caps, "Per point, the reads the database's cache missed (in all, and per CPU core of the host) and the reads that reached the data disk, per second (bars), with the disk's mean read latency and the cache's hit ratio (lines). Where the device reads fall while the misses stay, the OS page cache served them.")
		}
		if c, ok := cpuPointsChart(p, s); ok {
			c.Wide = true
			b.Charts = append(b.Charts, c)
			caps = append(caps, "Then the host's CPU at each point, as a share of all its CPUs: the server's processes, the client's, and the rest, with the disk's read latency. A point near 100% is bound by CPU, whatever its cache.")
		}
		b.ChartCaption = strings.Join(caps, " ")
		p.Blocks = append(p.Blocks, b)
	}
	return p
}

// perPoint is each point's label, the sweet spot marked, and the mean of
// each telemetry key over its repetitions (nil where it has none); found
// says whether any point had any of keys.
func perPoint(s *result.Sweep, keys ...string) (labels [][]string, series map[string][]any, found bool) {
	series = map[string][]any{}
	_, spot, hasSpot := sweetSpot(s)
	for i, pt := range s.Points {
		note := ""
		if hasSpot && i == spot {
			note = "sweet spot"
		}
		labels = append(labels, pointTick(s, pt, note))
		for _, k := range keys {
			if xs := pt.Telemetry[k]; len(xs) > 0 {
				series[k] = append(series[k], result.Mean(xs))
				found = true
			} else {
				series[k] = append(series[k], nil)
			}
		}
	}
	return labels, series, found
}

func barSet(label string, i int, data []any, stack string) obj {
	return obj{"type": "bar", "label": label, "data": data, "backgroundColor": color(i), "yAxisID": "y", "stack": stack, "order": 1}
}

func lineSet(label string, i int, data []any, axis string) obj {
	return obj{"type": "line", "label": label, "data": data, "borderColor": color(i), "backgroundColor": color(i),
		"yAxisID": axis, "borderWidth": 2, "pointRadius": 3, "spanGaps": true, "order": 0}
}

// whyChart draws the figures that explain a cache study, per point.
func whyChart(p *page, s *result.Sweep) (chartRef, bool) {
	labels, series, found := perPoint(s, "physical_reads_per_s", "read_iops", "read_await_ms", "hit_pct", "physical_reads_per_core")
	if !found {
		return chartRef{}, false
	}
	// The hit ratio's axis starts a point below its lowest value: 95% and
	// 99.9% are far apart in misses, and would look alike from zero.
	hitMin := 100.0
	for _, v := range series["hit_pct"] {
		if v != nil {
			hitMin = min(hitMin, v.(float64))
		}
	}
	return p.addChart("cache misses and disk reads per point", false, obj{
		"type": "bar",
		"data": obj{"labels": labels, "datasets": []obj{
			barSet("cache misses/s", 0, series["physical_reads_per_s"], "misses"), barSet("disk reads/s", 4, series["read_iops"], "disk"),
			barSet("cache misses/s per CPU core", 3, series["physical_reads_per_core"], "core"),
			lineSet("read latency ms", 1, series["read_await_ms"], "ms"), lineSet("cache hit %", 2, series["hit_pct"], "pct"),
		}},
		"options": obj{
			"scales": obj{
				"x":   pointTicks(obj{}),
				"y":   obj{"beginAtZero": true, "title": axisTitle("per second")},
				"ms":  obj{"beginAtZero": true, "position": "right", "grid": obj{"drawOnChartArea": false}, "title": axisTitle("read latency, ms")},
				"pct": obj{"min": max(0, math.Floor(hitMin)-1), "max": 100, "position": "right", "grid": obj{"drawOnChartArea": false}, "title": axisTitle("hit %")},
			},
			"plugins": obj{
				"title":   chartTitle("Why: cache misses, disk reads and latency per point"),
				"tooltip": obj{"mode": "index", "intersect": false},
			},
		},
	}), true
}

// cpuPointsChart draws where the host's CPU went at each point (the server's
// processes, the client, the rest of the host) beside the data disk's
// read latency: a point short of CPU is not waiting on its disk.
func cpuPointsChart(p *page, s *result.Sweep) (chartRef, bool) {
	labels, series, found := perPoint(s, "cpu_busy_pct", "server_pct", "client_pct", "read_await_ms")
	if !found || !slices.ContainsFunc(series["cpu_busy_pct"], func(v any) bool { return v != nil }) {
		return chartRef{}, false
	}
	// The rest of the host: busy less the server and the client, where
	// both are known.
	rest := make([]any, len(labels))
	for i, busy := range series["cpu_busy_pct"] {
		srv, cli := series["server_pct"][i], series["client_pct"][i]
		if busy != nil && srv != nil && cli != nil {
			rest[i] = max(0, busy.(float64)-srv.(float64)-cli.(float64))
		}
	}
	return p.addChart("CPU and read latency per point", false, obj{
		"type": "bar",
		"data": obj{"labels": labels, "datasets": []obj{
			barSet("server CPU %", 0, series["server_pct"], "cpu"), barSet("client CPU %", 3, series["client_pct"], "cpu"),
			barSet("rest of the host %", 5, rest, "cpu"),
			lineSet("read latency ms", 1, series["read_await_ms"], "ms"),
		}},
		"options": obj{
			"scales": obj{
				"x":  pointTicks(obj{"stacked": true}),
				"y":  obj{"stacked": true, "min": 0, "max": 100, "title": axisTitle("% of all the host's CPUs")},
				"ms": obj{"beginAtZero": true, "position": "right", "grid": obj{"drawOnChartArea": false}, "title": axisTitle("read latency, ms")},
			},
			"plugins": obj{
				"title":   chartTitle("Why: where the host's CPU went, and the disk's read latency, per point"),
				"tooltip": obj{"mode": "index", "intersect": false},
			},
		},
	}), true
}

func sweepStats(s *result.Sweep) []stat {
	out := []stat{{"points", strconv.Itoa(len(s.Points))}, {"runs done", fmt.Sprintf("%d of %d", s.Done, len(s.Order))}}
	m := s.Primary()
	better := func(a, b float64) bool { return a > b == m.HigherIsBetter && a != b }
	best, bestGain := -1, -1
	for i, p := range s.Points {
		if st := p.Stats[m.Key]; st != nil && (best < 0 || better(st.Mean, s.Points[best].Stats[m.Key].Mean)) {
			best = i
		}
		if g := p.Gains[m.Key]; g != nil && g.Significant && better(g.Pct, 0) &&
			(bestGain < 0 || better(g.Pct, s.Points[bestGain].Gains[m.Key].Pct)) {
			bestGain = i
		}
	}
	word := "highest "
	if !m.HigherIsBetter {
		word = "lowest "
	}
	if best >= 0 {
		out = append(out, stat{word + m.Label + " · " + paramsLabel(s.Varied, s.Points[best].Params), fmtValue(s.Points[best].Stats[m.Key].Mean)})
	}
	if bestGain >= 0 {
		out = append(out, stat{"largest significant improvement · " + paramsLabel(s.Varied, s.Points[bestGain].Params),
			signedPct(s.Points[bestGain].Gains[m.Key].Pct)})
	}
	return out
}

func sweepConfig(d *Doc) block {
	s := d.Sweep
	exp := [][2]string{
		{"name", s.Name},
		{"workload", s.Workload},
		{"varied", strings.Join(s.Varied, " × ")},
		{"baseline", result.Settings(s.Baseline)},
		{"repeat", strconv.Itoa(s.Repeat)},
		{"runs", fmt.Sprintf("%d of %d done, interleaved", s.Done, len(s.Order))},
		{"started", s.StartedAt.UTC().Format("2006-01-02 15:04:05 MST")},
	}
	var settings [][2]string
	keys := make([]string, 0, len(s.Settings))
	for k := range s.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		settings = append(settings, [2]string{k, s.Settings[k]})
	}
	var spec [][2]string
	if v := decodeJSON(s.Spec); v != nil {
		flatten("", v, &spec)
	}
	groups := []kvGroup{
		{"System under test", hostRows(s.Host, s.Target)},
		{"Experiment", exp},
		{"Server settings every point shares", settings},
		{"Experiment spec, as written", spec},
	}
	// The sweep document suffices; a run document, when still next to it,
	// adds the workload's resolved parameters.
	if path, cfg := firstRunConfig(d); cfg != nil {
		var rows [][2]string
		flatten("", cfg, &rows)
		groups = append(groups, kvGroup{"Workload parameters (from " + path + ")", rows})
	}
	return kvBlock("Configuration", groups, "Figure 1: the system under test, the server settings and the experiment. Varied parameters are in the points table.")
}

func firstRunConfig(d *Doc) (string, map[string]any) {
	for _, p := range d.Sweep.Points {
		for _, r := range p.Runs {
			if r == "" {
				continue
			}
			path := r
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(d.Path), r)
			}
			if doc, err := readRun(path); err == nil {
				return r, doc.Config
			}
		}
	}
	return "", nil
}

// metricsBlock: each metric's mean against the x parameter, one line per
// series, with the 95% confidence interval as error bars; the primary
// metric first.
func metricsBlock(p *page, s *result.Sweep, l sweepLayout) (block, bool) {
	xl := l.x
	if xl == "" {
		xl = "point"
	}
	b := block{Heading: "Results"}
	for _, m := range primaryFirst(s) {
		var sets []obj
		drawn := false
		for k, name := range l.series {
			data := gaps(len(l.xs))
			has := false
			for j, i := range l.at[k] {
				st := s.Points[max(i, 0)].Stats[m.Key]
				if i < 0 || st == nil {
					continue
				}
				data[j] = obj{"y": st.Mean, "yMin": st.CILow, "yMax": st.CIHigh}
				has = true
			}
			if !has {
				continue // a series that did not run this workload
			}
			drawn = true
			c := color(k)
			sets = append(sets, obj{"label": name, "data": data, "borderColor": c, "backgroundColor": c,
				"pointRadius": 4, "pointHoverRadius": 6, "borderWidth": 2, "spanGaps": true,
				"errorBarColor": c, "errorBarWhiskerColor": c, "errorBarLineWidth": 1.5, "errorBarWhiskerSize": 14})
		}
		if !drawn {
			continue
		}
		yTitle := m.Label + " (mean)"
		if m.Unit != "" {
			yTitle = m.Label + ", " + m.Unit + " (mean)"
		}
		b.Charts = append(b.Charts, p.addChart(m.Label+" against "+xl, len(s.Metrics) > 1, obj{
			"type": "lineWithErrorBars",
			"data": obj{"labels": l.xs, "datasets": sets},
			"options": obj{
				"scales": obj{
					"x": obj{"type": "category", "offset": true, "title": axisTitle(xl)},
					"y": obj{"beginAtZero": true, "title": axisTitle(yTitle)},
				},
				"plugins": obj{
					"title":  chartTitle(m.Label + " against " + xl + betterNote(m)),
					"legend": obj{"display": len(l.series) > 1},
				},
			},
		}))
	}
	if len(b.Charts) == 0 {
		return block{}, false
	}
	b.ChartCaption = fmt.Sprintf("Figure 2: the mean of each point's %d repetitions against %s, in the matrix's order; error bars are the 95%% confidence interval of the mean.", s.Repeat, xl)
	if len(l.series) > 1 {
		b.ChartCaption += " One line per " + strings.Join(s.Varied[1:], ", ") + "."
	}
	return b, true
}

// primaryFirst is the sweep's metrics with the primary one first.
func primaryFirst(s *result.Sweep) []result.MetricDef {
	out := []result.MetricDef{s.Primary()}
	for _, m := range s.Metrics {
		if m.Key != s.PrimaryMetric {
			out = append(out, m)
		}
	}
	return out
}

func betterNote(m result.MetricDef) string {
	if m.HigherIsBetter {
		return " (higher is better)"
	}
	return " (lower is better)"
}

// headlines are the metrics whose gains a sweep draws: the primary one,
// and each workload's first when others ran beside it (their keys carry
// the workload's name: "WORKLOAD:METRIC").
func headlines(s *result.Sweep) []result.MetricDef {
	out := []result.MetricDef{s.Primary()}
	seen := map[string]bool{}
	for _, m := range s.Metrics {
		if name, _, ok := strings.Cut(m.Key, ":"); ok && !seen[name] {
			seen[name] = true
			out = append(out, m)
		}
	}
	return out
}

// besideNames are the workloads that ran beside the sweep's own.
func besideNames(s *result.Sweep) []string {
	var names []string
	for _, m := range headlines(s)[1:] {
		name, _, _ := strings.Cut(m.Key, ":")
		names = append(names, name)
	}
	return names
}

// gainBlock: the % gain over the baseline of each headline metric, one
// chart per series. Gains whose interval includes zero are drawn pale and
// listed as not significant; the two kinds are separate datasets so the
// legend says so.
func gainBlock(p *page, s *result.Sweep, l sweepLayout) (block, bool) {
	b := block{Heading: "Change over the baseline"}
	var labels []string
	for _, m := range headlines(s) {
		if gainCharts(p, &b, s, l, m) {
			labels = append(labels, m.Label+" ("+strings.TrimSuffix(strings.TrimPrefix(betterNote(m), " ("), " is better)")+" is better)")
		}
	}
	if len(labels) == 0 {
		return block{}, false
	}
	b.ChartCaption = fmt.Sprintf("Figure 3: %% change of each point's mean %s over its baseline (%s, same other parameters), with its 95%% interval. Pale bars are not significant: their interval includes 0.",
		strings.Join(labels, " and "), result.Settings(s.Baseline))
	return b, true
}

// gainCharts adds m's gain charts to b, one per series that has a gain,
// and reports whether there were any.
func gainCharts(p *page, b *block, s *result.Sweep, l sweepLayout, m result.MetricDef) bool {
	return changeCharts(p, b, s, l, changeChart{
		title: "Change in " + m.Label + " over the baseline, %", yTitle: "% change over baseline", better: betterNote(m),
		of: func(pt result.SweepPoint) (change, bool) {
			g := pt.Gains[m.Key]
			if g == nil {
				return change{}, false
			}
			return change{g.Pct, g.Low, g.High, g.Significant}, true
		},
		axis: pctAxis,
	})
}

// pctAxis is a gain chart's y range, lo to hi in %, in steps of 5, 10
// or 20.
func pctAxis(lo, hi float64) obj {
	step := 5.0
	if hi-lo > 60 {
		step = 20
	} else if hi-lo > 25 {
		step = 10
	}
	return obj{"min": math.Floor(lo/step) * step, "max": math.Ceil(hi/step) * step, "ticks": obj{"stepSize": step}}
}

// change is a point's change over its baseline, as a chart draws it.
type change struct {
	v, lo, hi   float64
	significant bool
}

// changeChart is what change charts draw: their title ("Change in a
// metric over the baseline, %"), the y axis's title, which way is better, each
// point's change (false where it has none) and the y axis of the range
// lo to hi that every series' changes span, 0 included.
type changeChart struct {
	title, yTitle, better string
	of                    func(result.SweepPoint) (change, bool)
	axis                  func(lo, hi float64) obj
}

// changeCharts adds c's charts to b, one per series that has a change,
// and reports whether there were any. Changes whose interval includes
// zero are drawn pale, in a dataset of their own so that the legend says
// they are not significant.
func changeCharts(p *page, b *block, s *result.Sweep, l sweepLayout, c changeChart) bool {
	lo, hi := 0.0, 0.0
	has := make([]bool, len(l.series))
	for k := range l.series {
		for _, i := range l.at[k] {
			if ch, ok := c.of(s.Points[max(i, 0)]); i >= 0 && ok {
				has[k] = true
				lo, hi = math.Min(lo, ch.lo), math.Max(hi, ch.hi)
			}
		}
	}
	if !slices.Contains(has, true) {
		return false
	}
	// One y range for every chart of the figure, so that the levels
	// compare by eye.
	y := c.axis(lo, hi)
	y["title"] = axisTitle(c.yTitle)
	for k, name := range l.series {
		if !has[k] {
			continue
		}
		sig, ns := gaps(len(l.xs)), gaps(len(l.xs))
		sigNotes := make([]string, len(l.xs))
		nsNotes := make([]string, len(l.xs))
		for j, i := range l.at[k] {
			if i < 0 {
				continue
			}
			ch, ok := c.of(s.Points[i])
			switch {
			case ok && ch.significant:
				sig[j] = obj{"y": ch.v, "yMin": ch.lo, "yMax": ch.hi}
				sigNotes[j] = "significant: the 95% interval excludes 0"
			case ok:
				ns[j] = obj{"y": ch.v, "yMin": ch.lo, "yMax": ch.hi}
				nsNotes[j] = "not significant: the 95% interval includes 0"
			case isBaseline(s, i):
				sig[j] = obj{"y": 0, "yMin": 0, "yMax": 0}
				sigNotes[j] = "the baseline"
			}
		}
		col := color(k)
		title := c.title
		if name != "all points" {
			title += ", " + name
		}
		b.Charts = append(b.Charts, p.addChart(title, true, obj{
			"type": "barWithErrorBars",
			"data": obj{"labels": l.xs, "datasets": []obj{
				{"label": "significant", "data": sig, "notes": sigNotes, "backgroundColor": col, "borderColor": col, "borderWidth": 1,
					"errorBarColor": "#1d2330", "errorBarWhiskerColor": "#1d2330"},
				{"label": "not significant (interval includes 0)", "data": ns, "notes": nsNotes, "backgroundColor": fade(col, 0.22),
					"borderColor": col, "borderWidth": 1, "errorBarColor": "#1d2330", "errorBarWhiskerColor": "#1d2330"},
			}},
			"options": obj{
				"datasets": obj{"barWithErrorBars": obj{"grouped": false, "maxBarThickness": 56}},
				"scales": obj{
					"x": obj{"title": axisTitle(l.x)},
					"y": y,
				},
				"plugins": obj{"title": chartTitle(title + c.better)},
			},
		}))
	}
	return true
}

// gaps makes n empty data points: the error-bar charts need an object in
// every slot, and {y: null} is one that Chart.js leaves out.
func gaps(n int) []any {
	d := make([]any, n)
	for i := range d {
		d[i] = obj{"y": nil}
	}
	return d
}

// pointsTable is every point of the sweep, a row each: its parameters,
// each metric's mean and interval, the change over the baseline, and the
// means of what explains them.
func pointsTable(s *result.Sweep) *table {
	c := newPointsCols(s)
	tx := "primary transaction"
	if s.PrimaryTx != "" {
		tx = s.PrimaryTx
	}
	t := &table{Class: "wide", Head: heads(c.head(s)...),
		Caption: fmt.Sprintf("Every point: its repetitions' mean of each metric with the 95%% confidence interval of the mean (Student's t), the mean of their %s p95 latencies with its interval, the %% change in %s over the baseline, and the means of what the host and the database did over the measured windows: the data disk's reads and read latency, the cache's misses and hit ratio.", tx, c.primary.Label)}
	if c.steady {
		t.Caption += " Steady: how many of the point's repetitions judged had a steady window, by MSER-5 (the runs that did not are in the notes)."
	}
	if c.verdicts {
		t.Caption += " Limited by: what most of the point's repetitions were limited by, from their own telemetry (hover for each one's verdict; a run's report says why)."
	}
	t.Caption += faultCaption(s)
	for i, p := range s.Points {
		t.Rows = append(t.Rows, row{ID: fmt.Sprintf("point-%d", i), Cells: c.row(s, i, p)})
	}
	return t
}

// pointsCols are the points table's metrics, and the columns only some
// sweeps have: the resident fraction, the telemetry that explains, the
// errors.
type pointsCols struct {
	metrics          []result.MetricDef
	primary          result.MetricDef
	resident, errors bool
	explains         map[string]bool
	// steady: some point's repetitions had their windows judged;
	// verdicts: some had a verdict on what limited them.
	steady, verdicts bool
}

func newPointsCols(s *result.Sweep) pointsCols {
	c := pointsCols{metrics: primaryFirst(s), primary: s.Primary(), explains: map[string]bool{}}
	for _, p := range s.Points {
		c.resident = c.resident || len(p.Resident) > 0
		c.errors = c.errors || len(p.Errors) > 0
		c.steady = c.steady || len(p.Steady) > 0
		c.verdicts = c.verdicts || len(p.Verdicts) > 0
		for k := range p.Telemetry {
			c.explains[k] = true
		}
	}
	return c
}

// explained are the classic telemetry figures some point has.
func (c pointsCols) explained() []telemetry.Explain {
	var out []telemetry.Explain
	for _, e := range telemetry.Explains {
		if e.Classic && c.explains[e.Key] {
			out = append(out, e)
		}
	}
	return out
}

func (c pointsCols) head(s *result.Sweep) []string {
	var h []string
	h = append(h, s.Varied...)
	if s.VariesServer() {
		h = append(h, "server version")
	}
	// The primary metric, its change and what limited the point come
	// first, so that they fit the page; the other metrics after them.
	h = append(h, "#n")
	for _, m := range c.metrics {
		if m.Key == c.primary.Key {
			h = append(h, "#mean "+m.Label, "#95% CI", "#±")
		}
	}
	h = append(h, "#p95 ms", "#change", "#change 95% CI", "significant")
	if c.verdicts {
		h = append(h, "limited by")
	}
	h = append(h, faultHeads(s)...)
	for _, m := range c.metrics {
		if m.Key != c.primary.Key {
			h = append(h, "#mean "+m.Label, "#95% CI")
		}
	}
	if c.resident {
		h = append(h, "#resident")
	}
	for _, e := range c.explained() {
		h = append(h, "#"+strings.TrimSpace(e.Label+" "+e.Unit))
	}
	if c.steady {
		h = append(h, "#steady")
	}
	if c.errors {
		h = append(h, "errors")
	}
	return h
}

// row is point i's cells, column for column with head.
func (c pointsCols) row(s *result.Sweep, i int, p result.SweepPoint) []cell {
	var cells []cell
	for _, k := range s.Varied {
		cells = append(cells, cell{Text: p.Params[k], Class: "param"})
	}
	if s.VariesServer() {
		cells = append(cells, cell{Text: p.ServerVersion})
	}
	cells = append(cells, num(strconv.Itoa(len(p.Values[c.primary.Key]))))
	cells = append(cells, c.metricCells(p, true)...)
	p95 := "—"
	if st := p.P95Stats(); st != nil {
		p95 = ms(st.Mean)
		if st.N > 1 {
			p95 += " ± " + ms((st.CIHigh-st.CILow)/2)
		}
	}
	cells = append(cells, num(p95))
	cells = append(cells, c.gainCells(p.Gains[c.primary.Key], isBaseline(s, i))...)
	if c.verdicts {
		cells = append(cells, verdictCell(p))
	}
	cells = append(cells, faultCells(s, p)...)
	cells = append(cells, c.metricCells(p, false)...)
	if c.resident {
		r := "—"
		if len(p.Resident) > 0 {
			r = fmt.Sprintf("%.1f%%", 100*result.Mean(p.Resident))
		}
		cells = append(cells, num(r))
	}
	for _, e := range c.explained() {
		cells = append(cells, num(explainMean(p, e.Key)))
	}
	if c.steady {
		cells = append(cells, steadyCell(p))
	}
	if c.errors {
		cells = append(cells, cell{Text: strings.Join(p.Errors, "; "), Class: "bad"})
	}
	return cells
}

// metricCells are the primary metric's mean, interval and interval
// relative to its mean at the point, or (primary false) each other
// metric's mean and interval.
func (c pointsCols) metricCells(p result.SweepPoint, primary bool) []cell {
	var cells []cell
	for _, m := range c.metrics {
		if (m.Key == c.primary.Key) != primary {
			continue
		}
		st := p.Stats[m.Key]
		mean, ci, rel := "—", "—", "—"
		if st != nil {
			mean, ci = fmtValue(st.Mean), fmtValue(st.CILow)+" – "+fmtValue(st.CIHigh)
			if st.Mean != 0 {
				rel = fmt.Sprintf("%.1f%%", 50*(st.CIHigh-st.CILow)/math.Abs(st.Mean))
			}
		}
		cells = append(cells, num(mean), num(ci))
		if m.Key == c.primary.Key {
			cells = append(cells, num(rel))
		}
	}
	return cells
}

// gainCells are the change in the primary metric over the baseline, its
// interval, and whether it is significant and which way.
func (c pointsCols) gainCells(g *result.Gain, baseline bool) []cell {
	var ch *change
	if g != nil {
		ch = &change{g.Pct, g.Low, g.High, g.Significant}
	}
	return changeCells(ch, baseline, c.primary.HigherIsBetter, signedPct)
}

// changeCells are a change over the baseline (nil for none), its
// interval, and whether it is significant and which way, each figure
// as format writes it.
func changeCells(ch *change, baseline, higherIsBetter bool, format func(float64) string) []cell {
	switch {
	case ch != nil:
		sig := cell{Text: "yes", Class: "good"}
		if ch.v > 0 != higherIsBetter {
			sig.Class = "bad"
		}
		if !ch.significant {
			sig = cell{Text: "no", Class: "ns", Title: "the 95% interval includes 0"}
		}
		return []cell{num(format(ch.v)), num(format(ch.lo) + " … " + format(ch.hi)), sig}
	case baseline:
		return []cell{num("—"), num("—"), {Text: "baseline", Class: "base"}}
	}
	return []cell{num("—"), num("—"), {Text: "—"}}
}

// explainMean is a point's mean of a telemetry figure over its repetitions.
func explainMean(p result.SweepPoint, key string) string {
	if xs := p.Telemetry[key]; len(xs) > 0 {
		return fmtValue(result.Mean(xs))
	}
	return "—"
}

// profileTable is the load profile of every point, side by side: the
// AWR-like figures of each point's runs, averaged over its repetitions.
func profileTable(s *result.Sweep) (*table, bool) {
	var keys []telemetry.Explain
	for _, e := range telemetry.Explains {
		for _, p := range s.Points {
			if len(p.Telemetry[e.Key]) > 0 {
				keys = append(keys, e)
				break
			}
		}
	}
	if len(keys) == 0 {
		return nil, false
	}
	h := slices.Clone(s.Varied)
	for _, e := range keys {
		h = append(h, "#"+strings.TrimSpace(e.Label+" "+e.Unit))
	}
	t := &table{Class: "wide", Head: heads(h...),
		Caption: "What the host and the database did at each point, over the measured windows, averaged over its repetitions: " +
			"the host's CPU and data disk, the database's own counters per second, and its sampled sessions. Every run's report has the detail."}
	for i, p := range s.Points {
		var c []cell
		for _, k := range s.Varied {
			c = append(c, cell{Text: p.Params[k], Class: "param"})
		}
		for _, e := range keys {
			c = append(c, num(explainMean(p, e.Key)))
		}
		t.Rows = append(t.Rows, row{ID: fmt.Sprintf("profile-%d", i), Cells: c})
	}
	return t, true
}
