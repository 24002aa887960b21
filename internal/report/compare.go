package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
)

// ErrMixedKinds means one document is a run and the other a sweep.
var ErrMixedKinds = errors.New("cannot compare a run with a sweep: give two runs or two sweeps")

// Comparison is two documents side by side, metric by metric.
type Comparison struct {
	A, B   *Doc
	Groups []CompareGroup
	// Notes are differences a reader must know, such as another workload.
	Notes []string
}

// CompareGroup is a set of metrics under one heading: "headline", a
// transaction type, or a sweep point.
type CompareGroup struct {
	Name string
	Rows []CompareRow
}

// CompareRow is one metric in A and B. A value missing on one side (a
// point only one sweep has) is NaN.
type CompareRow struct {
	Metric string
	A, B   float64
	// LowerIsBetter marks latencies, where a fall is the improvement.
	LowerIsBetter bool
	// Count marks whole numbers, printed without decimals.
	Count bool
	// Note qualifies the difference, e.g. whether two intervals overlap.
	Note string
}

// Diff is B's % difference from A, NaN where A is 0 or either is missing.
func (r CompareRow) Diff() float64 {
	if math.IsNaN(r.A) || math.IsNaN(r.B) || r.A == 0 {
		return math.NaN()
	}
	return (r.B - r.A) / math.Abs(r.A) * 100
}

// Compare puts two runs or two sweeps side by side.
func Compare(a, b *Doc) (*Comparison, error) {
	c := &Comparison{A: a, B: b}
	switch {
	case a.Run != nil && b.Run != nil:
		compareRuns(c, a.Run, b.Run)
	case a.Sweep != nil && b.Sweep != nil:
		compareSweeps(c, a.Sweep, b.Sweep)
	default:
		return nil, ErrMixedKinds
	}
	return c, nil
}

func optional(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func compareRuns(c *Comparison, a, b *result.Document) {
	if a.Workload != b.Workload {
		c.Notes = append(c.Notes, fmt.Sprintf("different workloads: %s and %s", a.Workload, b.Workload))
	}
	if a.Target.Kind != b.Target.Kind || a.Target.Version != b.Target.Version {
		c.Notes = append(c.Notes, fmt.Sprintf("different servers: %s and %s", a.Target.Server(), b.Target.Server()))
	}
	if a.Interrupted || b.Interrupted {
		c.Notes = append(c.Notes, "at least one run was interrupted: its window is shorter than configured")
	}
	if a.ServerLost != nil || b.ServerLost != nil {
		c.Notes = append(c.Notes, "at least one run lost its server: its figures cover only the seconds the server was up")
	}
	head := CompareGroup{Name: "headline"}
	add := func(metric string, x, y float64, lower bool) {
		if math.IsNaN(x) && math.IsNaN(y) {
			return
		}
		head.Rows = append(head.Rows, CompareRow{Metric: metric, A: x, B: y, LowerIsBetter: lower})
	}
	for _, key := range metricKeys(defsOf(a.Metrics), defsOf(b.Metrics)) {
		ma, okA := a.Metric(key)
		mb, okB := b.Metric(key)
		def := ma.MetricDef
		if !okA {
			def = mb.MetricDef
		}
		db := func(ok bool, m result.Metric) float64 {
			if !ok {
				return math.NaN()
			}
			return optional(m.DB)
		}
		client := func(ok bool, m result.Metric) float64 {
			if !ok {
				return math.NaN()
			}
			return optional(m.Client)
		}
		add(key, db(okA, ma), db(okB, mb), !def.HigherIsBetter)
		add(key+"_client", client(okA, ma), client(okB, mb), !def.HigherIsBetter)
	}
	add("window_seconds", a.WindowSeconds, b.WindowSeconds, false)
	c.Groups = append(c.Groups, head)
	if g, ok := sessionsGroup(a, b); ok {
		c.Groups = append(c.Groups, g)
	}

	byName := map[string]result.Tx{}
	for _, t := range b.Transactions {
		byName[t.Name] = t
	}
	seen := map[string]bool{}
	names := []string{}
	for _, t := range a.Transactions {
		names = append(names, t.Name)
		seen[t.Name] = true
	}
	for _, t := range b.Transactions {
		if !seen[t.Name] {
			names = append(names, t.Name)
		}
	}
	aBy := map[string]result.Tx{}
	for _, t := range a.Transactions {
		aBy[t.Name] = t
	}
	for _, n := range names {
		ta, okA := aBy[n]
		tb, okB := byName[n]
		val := func(ok bool, v float64) float64 {
			if !ok {
				return math.NaN()
			}
			return v
		}
		g := CompareGroup{Name: n}
		for _, m := range []struct {
			name  string
			f     func(result.Tx) float64
			lower bool
			count bool
		}{
			{"per_minute", func(t result.Tx) float64 { return t.PerMinute }, false, false},
			{"p50_ms", func(t result.Tx) float64 { return t.Latency.P50 }, true, false},
			{"p95_ms", func(t result.Tx) float64 { return t.Latency.P95 }, true, false},
			{"p99_ms", func(t result.Tx) float64 { return t.Latency.P99 }, true, false},
			{"errors", func(t result.Tx) float64 { return float64(t.Errors) }, true, true},
		} {
			g.Rows = append(g.Rows, CompareRow{Metric: m.name, A: val(okA, m.f(ta)), B: val(okB, m.f(tb)), LowerIsBetter: m.lower, Count: m.count})
		}
		if ta.InDoubt > 0 || tb.InDoubt > 0 {
			g.Rows = append(g.Rows, CompareRow{Metric: "in_doubt", A: val(okA, float64(ta.InDoubt)), B: val(okB, float64(tb.InDoubt)), LowerIsBetter: true, Count: true})
		}
		c.Groups = append(c.Groups, g)
	}
}

// defsOf are the definitions of a run's metrics.
func defsOf(ms []result.Metric) []result.MetricDef {
	defs := make([]result.MetricDef, len(ms))
	for i, m := range ms {
		defs[i] = m.MetricDef
	}
	return defs
}

// metricKeys are A's metric keys in A's order, then those only B has.
func metricKeys(a, b []result.MetricDef) []string {
	var keys []string
	for _, m := range append(append([]result.MetricDef(nil), a...), b...) {
		if !slices.Contains(keys, m.Key) {
			keys = append(keys, m.Key)
		}
	}
	return keys
}

// pointKey matches sweep points by their parameters, whatever their order.
func pointKey(params map[string]string) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s ", k, params[k])
	}
	return strings.TrimSpace(b.String())
}

func compareSweeps(c *Comparison, a, b *result.Sweep) {
	if a.Workload != b.Workload {
		c.Notes = append(c.Notes, fmt.Sprintf("different workloads: %s and %s", a.Workload, b.Workload))
	}
	if strings.Join(a.Varied, ",") != strings.Join(b.Varied, ",") {
		c.Notes = append(c.Notes, fmt.Sprintf("different varied parameters: %s and %s", strings.Join(a.Varied, " × "), strings.Join(b.Varied, " × ")))
	}
	if !a.Complete || !b.Complete {
		c.Notes = append(c.Notes, "at least one sweep is incomplete")
	}
	bBy := map[string]int{}
	for i, p := range b.Points {
		bBy[pointKey(p.Params)] = i
	}
	used := map[int]bool{}
	keys := metricKeys(a.Metrics, b.Metrics)
	defs := map[string]result.MetricDef{}
	for _, m := range append(append([]result.MetricDef(nil), b.Metrics...), a.Metrics...) {
		defs[m.Key] = m
	}
	primary := a.PrimaryMetric
	group := func(label string, pa, pb *result.SweepPoint) CompareGroup {
		g := CompareGroup{Name: label}
		for _, key := range keys {
			st := func(p *result.SweepPoint) *result.Stats {
				if p == nil {
					return nil
				}
				return p.Stats[key]
			}
			sa, sb := st(pa), st(pb)
			mean := func(s *result.Stats) float64 {
				if s == nil {
					return math.NaN()
				}
				return s.Mean
			}
			row := CompareRow{Metric: key + " (mean)", A: mean(sa), B: mean(sb), LowerIsBetter: !defs[key].HigherIsBetter}
			if sa != nil && sb != nil {
				if sa.CIHigh < sb.CILow || sb.CIHigh < sa.CILow {
					row.Note = "95% CIs apart"
				} else {
					row.Note = "95% CIs overlap"
				}
			}
			g.Rows = append(g.Rows, row)
		}
		p95 := func(p *result.SweepPoint) float64 {
			if p == nil || len(p.P95) == 0 {
				return math.NaN()
			}
			return result.Mean(p.P95)
		}
		g.Rows = append(g.Rows, CompareRow{Metric: "p95_ms (mean)", A: p95(pa), B: p95(pb), LowerIsBetter: true})
		gain := func(p *result.SweepPoint) float64 {
			if p == nil || p.Gains[primary] == nil {
				return math.NaN()
			}
			return p.Gains[primary].Pct
		}
		if ga, gb := gain(pa), gain(pb); !math.IsNaN(ga) || !math.IsNaN(gb) {
			g.Rows = append(g.Rows, CompareRow{Metric: primary + " gain % over baseline", A: ga, B: gb})
		}
		return g
	}
	for i := range a.Points {
		pa := &a.Points[i]
		var pb *result.SweepPoint
		if j, ok := bBy[pointKey(pa.Params)]; ok {
			pb = &b.Points[j]
			used[j] = true
		}
		c.Groups = append(c.Groups, group(paramsLabel(a.Varied, pa.Params), pa, pb))
	}
	for j := range b.Points {
		if !used[j] {
			c.Groups = append(c.Groups, group(paramsLabel(b.Varied, b.Points[j].Params), nil, &b.Points[j]))
		}
	}
}

func (r CompareRow) values() (string, string) {
	f := fmtValue
	if r.Count {
		f = human.Thousands
	}
	return f(r.A), f(r.B)
}

// fmtValue prints a metric's value at a precision fitting its size.
func fmtValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.Abs(v) >= 1000:
		return human.Thousands(v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func describe(d *Doc) string {
	if d.Sweep != nil {
		s := d.Sweep
		return fmt.Sprintf("%s: sweep %s, %s on %s, %s", d.Path, s.Name, s.Workload, s.Target.Server(),
			s.StartedAt.UTC().Format("2006-01-02 15:04"))
	}
	r := d.Run
	return fmt.Sprintf("%s: %s on %s, %s, %.0f s", d.Path, r.Workload, r.Target.Server(),
		r.StartedAt.UTC().Format("2006-01-02 15:04"), r.WindowSeconds)
}

// Text prints the comparison as aligned columns: the metric, A, B and
// B's % difference from A.
func (c *Comparison) Text(w io.Writer) {
	fmt.Fprintln(w, "A  "+describe(c.A))
	fmt.Fprintln(w, "B  "+describe(c.B))
	for _, n := range c.Notes {
		fmt.Fprintln(w, "Note: "+n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tA\tB\tdiff\t")
	for _, g := range c.Groups {
		fmt.Fprintf(tw, "%s\t\t\t\t\n", g.Name)
		for _, r := range g.Rows {
			va, vb := r.values()
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Metric, va, vb, signedPct(r.Diff()), r.Note)
		}
	}
	tw.Flush()
}

// CompareHTML writes the comparison as a self-contained page: the two
// configurations side by side, then every metric.
func CompareHTML(w io.Writer, c *Comparison) error {
	p := &page{Title: "dbrig comparison", Subtitle: []string{"A  " + describe(c.A), "B  " + describe(c.B)}}
	if len(c.Notes) > 0 {
		p.Blocks = append(p.Blocks, block{Heading: "Notes", Notes: c.Notes})
	}
	p.Blocks = append(p.Blocks, block{Heading: "Configuration", Table: configSideBySide(c.A, c.B)})
	t := &table{Class: "wide", Head: heads("metric", "#A", "#B", "#B vs A", "note"),
		Caption: "B's % difference from A. Green is better, red worse: higher for throughput, lower for latency and errors."}
	for _, g := range c.Groups {
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: g.Name, Class: "group", Span: 5}}})
		for _, r := range g.Rows {
			d := r.Diff()
			dc := num(signedPct(d))
			if !math.IsNaN(d) && math.Abs(d) >= 0.05 {
				if (d > 0) != r.LowerIsBetter {
					dc.Class = "num good"
				} else {
					dc.Class = "num bad"
				}
			}
			va, vb := r.values()
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: r.Metric}, num(va), num(vb), dc, {Text: r.Note}}})
		}
	}
	p.Blocks = append(p.Blocks, block{Heading: "Metrics", Table: t})
	return p.render(w)
}

// configRowsOf are a document's Figure 1 rows, flattened for matching.
func configRowsOf(d *Doc) [][2]string {
	var rows [][2]string
	if d.Sweep != nil {
		s := d.Sweep
		rows = append(rows, hostRows(s.Host, s.Target)...)
		var set [][2]string
		for k, v := range s.Settings {
			set = append(set, [2]string{"setting." + k, v})
		}
		sort.Slice(set, func(i, j int) bool { return set[i][0] < set[j][0] })
		rows = append(rows, set...)
		var spec [][2]string
		flatten("spec", decodeJSON(s.Spec), &spec)
		return append(rows, spec...)
	}
	rows = append(rows, hostRows(d.Run.Host, d.Run.Target)...)
	var cfg [][2]string
	flatten("config", d.Run.Config, &cfg)
	return append(rows, cfg...)
}

func configSideBySide(a, b *Doc) *table {
	ra, rb := configRowsOf(a), configRowsOf(b)
	bm := map[string]string{}
	for _, r := range rb {
		bm[r[0]] = r[1]
	}
	am := map[string]bool{}
	t := &table{Head: heads("", "A", "B"), Caption: "Figure 1 of each document; rows that differ are marked."}
	addRow := func(k, va, vb string) {
		cls := ""
		if va != vb {
			cls = "bad"
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: k, Class: "key"}, {Text: va, Class: cls}, {Text: vb, Class: cls}}})
	}
	for _, r := range ra {
		am[r[0]] = true
		vb, ok := bm[r[0]]
		if !ok {
			vb = "—"
		}
		addRow(r[0], r[1], vb)
	}
	for _, r := range rb {
		if !am[r[0]] {
			addRow(r[0], "—", r[1])
		}
	}
	return t
}
