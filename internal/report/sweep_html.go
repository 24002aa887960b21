package report

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/result"
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
	return strings.Join(parts, " ")
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
	p.Subtitle = append(p.Subtitle, fmt.Sprintf("%s on %s %s · started %s · %d points × %d repeats",
		s.Workload, s.Target.Kind, s.Target.Version, s.StartedAt.UTC().Format("2006-01-02 15:04:05 MST"), len(s.Points), s.Repeat))
	if !s.Complete {
		p.Subtitle = append(p.Subtitle, fmt.Sprintf("Incomplete: %d of %d runs done; the figures cover those.", s.Done, runs))
	}
	p.Stats = sweepStats(s)

	if len(s.Notes) > 0 {
		p.Blocks = append(p.Blocks, block{Heading: "Notes", Notes: s.Notes})
	}
	p.Blocks = append(p.Blocks, sweepConfig(d))

	l := layout(s)
	if b, ok := throughputBlock(p, s, l); ok {
		p.Blocks = append(p.Blocks, b)
	}
	if b, ok := gainBlock(p, s, l); ok {
		p.Blocks = append(p.Blocks, b)
	}
	p.Blocks = append(p.Blocks, block{Heading: "Points", Table: pointsTable(s)})
	return p
}

func sweepStats(s *result.Sweep) []stat {
	out := []stat{{"points", strconv.Itoa(len(s.Points))}, {"runs done", fmt.Sprintf("%d of %d", s.Done, len(s.Order))}}
	best, bestGain := -1, -1
	for i, p := range s.Points {
		if p.Stats != nil && (best < 0 || p.Stats.Mean > s.Points[best].Stats.Mean) {
			best = i
		}
		if p.Gain != nil && p.Gain.Significant && (bestGain < 0 || p.Gain.Pct > s.Points[bestGain].Gain.Pct) {
			bestGain = i
		}
	}
	if best >= 0 {
		out = append(out, stat{"highest NOPM · " + paramsLabel(s.Varied, s.Points[best].Params), thousands(s.Points[best].Stats.Mean)})
	}
	if bestGain >= 0 {
		out = append(out, stat{"largest significant gain · " + paramsLabel(s.Varied, s.Points[bestGain].Params),
			signedPct(s.Points[bestGain].Gain.Pct)})
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

// throughputBlock: mean NOPM against the x parameter, one line per series,
// with the 95% confidence interval as error bars.
func throughputBlock(p *page, s *result.Sweep, l sweepLayout) (block, bool) {
	var sets []obj
	drawn := false
	for k, name := range l.series {
		data := gaps(len(l.xs))
		for j, i := range l.at[k] {
			if i < 0 || s.Points[i].Stats == nil {
				continue
			}
			st := s.Points[i].Stats
			data[j] = obj{"y": st.Mean, "yMin": st.CILow, "yMax": st.CIHigh}
			drawn = true
		}
		c := color(k)
		sets = append(sets, obj{"label": name, "data": data, "borderColor": c, "backgroundColor": c,
			"pointRadius": 4, "pointHoverRadius": 6, "borderWidth": 2, "spanGaps": true,
			"errorBarColor": c, "errorBarWhiskerColor": c, "errorBarLineWidth": 1.5, "errorBarWhiskerSize": 14})
	}
	if !drawn {
		return block{}, false
	}
	xl := l.x
	if xl == "" {
		xl = "point"
	}
	ref := p.addChart("NOPM against "+xl, false, obj{
		"type": "lineWithErrorBars",
		"data": obj{"labels": l.xs, "datasets": sets},
		"options": obj{
			"scales": obj{
				"x": obj{"type": "category", "offset": true, "title": axisTitle(xl)},
				"y": obj{"beginAtZero": true, "title": axisTitle("NOPM (mean)")},
			},
			"plugins": obj{
				"title":  chartTitle("Throughput against " + xl),
				"legend": obj{"display": len(l.series) > 1},
			},
		},
	})
	caption := fmt.Sprintf("Figure 2: mean NOPM of each point's %d repetitions against %s, in the matrix's order; error bars are the 95%% confidence interval of the mean.", s.Repeat, xl)
	if len(l.series) > 1 {
		caption += " One line per " + strings.Join(s.Varied[1:], ", ") + "."
	}
	return block{Heading: "Throughput", Charts: []chartRef{ref}, ChartCaption: caption}, true
}

// gainBlock: the % gain over the baseline, one chart per series. Gains
// whose interval includes zero are drawn pale and listed as not
// significant; the two kinds are separate datasets so the legend says so.
func gainBlock(p *page, s *result.Sweep, l sweepLayout) (block, bool) {
	lo, hi := 0.0, 0.0
	has := false
	for _, pt := range s.Points {
		if pt.Gain != nil {
			has = true
			lo, hi = math.Min(lo, pt.Gain.Low), math.Max(hi, pt.Gain.High)
		}
	}
	if !has {
		return block{}, false
	}
	// One y range for every chart, so that the levels compare by eye.
	step := 5.0
	if hi-lo > 60 {
		step = 20
	} else if hi-lo > 25 {
		step = 10
	}
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	b := block{Heading: "Gain over the baseline"}
	for k, name := range l.series {
		sig, ns := gaps(len(l.xs)), gaps(len(l.xs))
		sigNotes := make([]string, len(l.xs))
		nsNotes := make([]string, len(l.xs))
		for j, i := range l.at[k] {
			if i < 0 {
				continue
			}
			pt := s.Points[i]
			switch {
			case pt.Gain != nil && pt.Gain.Significant:
				sig[j] = obj{"y": pt.Gain.Pct, "yMin": pt.Gain.Low, "yMax": pt.Gain.High}
				sigNotes[j] = "significant: the 95% interval excludes 0"
			case pt.Gain != nil:
				ns[j] = obj{"y": pt.Gain.Pct, "yMin": pt.Gain.Low, "yMax": pt.Gain.High}
				nsNotes[j] = "not significant: the 95% interval includes 0"
			case isBaseline(s, i):
				sig[j] = obj{"y": 0, "yMin": 0, "yMax": 0}
				sigNotes[j] = "the baseline"
			}
		}
		c := color(k)
		title := "Gain % over the baseline"
		if name != "all points" {
			title += ", " + name
		}
		b.Charts = append(b.Charts, p.addChart(title, true, obj{
			"type": "barWithErrorBars",
			"data": obj{"labels": l.xs, "datasets": []obj{
				{"label": "significant", "data": sig, "notes": sigNotes, "backgroundColor": c, "borderColor": c, "borderWidth": 1,
					"errorBarColor": "#1d2330", "errorBarWhiskerColor": "#1d2330"},
				{"label": "not significant (interval includes 0)", "data": ns, "notes": nsNotes, "backgroundColor": fade(c, 0.22),
					"borderColor": c, "borderWidth": 1, "errorBarColor": "#1d2330", "errorBarWhiskerColor": "#1d2330"},
			}},
			"options": obj{
				"datasets": obj{"barWithErrorBars": obj{"grouped": false, "maxBarThickness": 56}},
				"scales": obj{
					"x": obj{"title": axisTitle(l.x)},
					"y": obj{"min": lo, "max": hi, "ticks": obj{"stepSize": step}, "title": axisTitle("gain % over baseline")},
				},
				"plugins": obj{"title": chartTitle(title)},
			},
		}))
	}
	b.ChartCaption = fmt.Sprintf("Figure 3: %% change of each point's mean NOPM over its baseline (%s, same other parameters), with its 95%% interval. Pale bars are not significant: their interval includes 0.", result.Settings(s.Baseline))
	return b, true
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

func pointsTable(s *result.Sweep) *table {
	hasRes, hasErr := false, false
	for _, p := range s.Points {
		hasRes = hasRes || len(p.Resident) > 0
		hasErr = hasErr || len(p.Errors) > 0
	}
	var h []string
	h = append(h, s.Varied...)
	h = append(h, "#n", "#mean NOPM", "#95% CI", "#±", "#p95 ms", "#gain", "#gain 95% CI", "significant")
	if hasRes {
		h = append(h, "#resident")
	}
	if hasErr {
		h = append(h, "errors")
	}
	t := &table{Class: "wide", Head: heads(h...),
		Caption: "Every point: its repetitions' mean NOPM with the 95% confidence interval of the mean (Student's t), the mean of their New-Order p95 latencies, and the gain over the baseline."}
	for i, p := range s.Points {
		var c []cell
		for _, k := range s.Varied {
			c = append(c, cell{Text: p.Params[k]})
		}
		if st := p.Stats; st != nil {
			half := (st.CIHigh - st.CILow) / 2
			rel := "—"
			if st.Mean != 0 {
				rel = fmt.Sprintf("%.1f%%", 100*half/st.Mean)
			}
			c = append(c, num(strconv.Itoa(st.N)), num(thousands(st.Mean)),
				num(thousands(st.CILow)+" – "+thousands(st.CIHigh)), num(rel), num(ms(st.P95)))
		} else {
			c = append(c, num(strconv.Itoa(len(p.NOPM))), num("—"), num("—"), num("—"), num("—"))
		}
		switch {
		case p.Gain != nil:
			sig := cell{Text: "yes", Class: "good"}
			if !p.Gain.Significant {
				sig = cell{Text: "no", Class: "ns", Title: "the 95% interval includes 0"}
			}
			c = append(c, num(signedPct(p.Gain.Pct)), num(signedPct(p.Gain.Low)+" … "+signedPct(p.Gain.High)), sig)
		case isBaseline(s, i):
			c = append(c, num("—"), num("—"), cell{Text: "baseline", Class: "base"})
		default:
			c = append(c, num("—"), num("—"), cell{Text: "—"})
		}
		if hasRes {
			r := "—"
			if len(p.Resident) > 0 {
				sum := 0.0
				for _, v := range p.Resident {
					sum += v
				}
				r = fmt.Sprintf("%.1f%%", 100*sum/float64(len(p.Resident)))
			}
			c = append(c, num(r))
		}
		if hasErr {
			c = append(c, cell{Text: strings.Join(p.Errors, "; "), Class: "bad"})
		}
		t.Rows = append(t.Rows, row{ID: fmt.Sprintf("point-%d", i), Cells: c})
	}
	return t
}
