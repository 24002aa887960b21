package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
)

// A sweep's faults: the outage around each run's actions (a failover)
// and the durability audit, by point, with their intervals and the change
// of the outage over the baseline.

// outageCells are a point's mean outage, its interval, and its mean
// per-VU median and max.
func outageCells(p result.SweepPoint) []cell {
	st := p.FaultStats[result.OutageKey]
	if st == nil {
		return []cell{num("—"), num("—"), num("—")}
	}
	perVU := "—"
	if med, mx := p.FaultStats[result.OutageVUMedianKey], p.FaultStats[result.OutageVUMaxKey]; med != nil && mx != nil {
		perVU = seconds(med.Mean) + " / " + seconds(mx.Mean)
	}
	return []cell{num(seconds(st.Mean)), num(seconds(st.CILow) + " – " + seconds(st.CIHigh)), num(perVU)}
}

// auditCells are what a point's audits found missing, of all they looked
// up, and in doubt.
func auditCells(p result.SweepPoint) []cell {
	du := p.Durability
	if du == nil {
		return []cell{num("—"), num("—")}
	}
	missing := num(human.Thousands(float64(du.Missing)) + " of " + human.Thousands(float64(du.Acknowledged)))
	missing.Title = human.Count(du.Audits, "audit")
	if du.Missing > 0 {
		missing.Class = "num bad"
	}
	return []cell{missing, num(human.Thousands(float64(du.InDoubt)))}
}

// seconds is a figure in seconds: to the hundredth below 10 s, where a
// failover without an HA manager takes a fraction of one, else to the
// tenth.
func seconds(v float64) string {
	if math.Abs(v) < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// faultsBlock is the outage at each point, with its interval, and its
// change over the baseline, in seconds, with what the audits found.
func faultsBlock(p *page, s *result.Sweep, l sweepLayout) (block, bool) {
	lines := SweepFaultLines(s)
	if !s.HasFault(result.OutageKey) && len(lines) == 0 {
		return block{}, false
	}
	b := block{Heading: "Faults: the outage and the durability audit", ID: "faults", Notes: lines, Table: faultsTable(s)}
	if !s.HasFault(result.OutageKey) {
		return b, true
	}
	b.Charts = append(b.Charts, outageChart(p, s))
	b.ChartCaption = "The outage around each run's action (a failover) at each point: the longest stretch in which no transaction completed, and each virtual user's own, its median and its longest; the mean of the point's repetitions, with the 95% confidence interval of the mean as error bars. Points are in the matrix's order; the baseline is marked."
	changed := changeCharts(p, &b, s, l, changeChart{
		title: "Change in the outage over the baseline, s", yTitle: "change over baseline, s", better: " (lower is better)",
		of: func(pt result.SweepPoint) (change, bool) {
			if c := outageChangeOf(pt); c != nil {
				return *c, true
			}
			return change{}, false
		},
		// Some room beyond either end, for the baseline's mark at 0.
		axis: func(lo, hi float64) obj {
			room := (hi - lo) / 10
			return obj{"suggestedMin": lo - room, "suggestedMax": hi + room}
		},
	})
	if changed {
		b.ChartCaption += fmt.Sprintf(" Then the change of each point's mean outage from its baseline's (%s, same other parameters), in seconds, with its 95%% interval (Welch's t); pale bars are not significant: their interval includes 0.", result.Settings(s.Baseline))
	}
	return b, true
}

// outageChangeOf is the change of p's mean outage over its baseline's,
// nil where there is none.
func outageChangeOf(p result.SweepPoint) *change {
	c := p.FaultChanges[result.OutageKey]
	if c == nil {
		return nil
	}
	return &change{c.Diff, c.Low, c.High, c.Significant}
}

// faultsTable is each point's faults: its outage with its interval and
// per VU, the outage's change over the baseline, its transactions in
// doubt, and what its audits found.
func faultsTable(s *result.Sweep) *table {
	outage, audited := s.HasFault(result.OutageKey), s.Audited()
	h := append(slices.Clone(s.Varied), "#n")
	if outage {
		h = append(h, "#outage s", "#outage 95% CI", "#per VU median / max s", "#change s", "#change 95% CI", "significant")
	}
	h = append(h, "#in doubt per run")
	if audited {
		h = append(h, "#missing", "#in doubt at the audit")
	}
	t := &table{Class: "wide", Head: heads(h...), Caption: "Each point's faults: the mean outage of its repetitions with its 95% confidence interval (Student's t), and the means of each virtual user's own, median / max; the change of the mean outage over the baseline, in seconds, with its 95% interval (Welch's t), significant where it excludes 0; the window's transactions in doubt, per run; and what its durability audits found, summed."}
	for i, p := range s.Points {
		var c []cell
		for _, k := range s.Varied {
			c = append(c, cell{Text: p.Params[k], Class: "param"})
		}
		n, inDoubt := "—", "—"
		if st := p.FaultStats[result.InDoubtKey]; st != nil {
			n, inDoubt = fmt.Sprint(st.N), fmtValue(st.Mean)
		}
		c = append(c, num(n))
		if outage {
			c = append(c, outageCells(p)...)
			c = append(c, changeCells(outageChangeOf(p), isBaseline(s, i), false, signedSeconds)...)
		}
		c = append(c, num(inDoubt))
		if audited {
			c = append(c, auditCells(p)...)
		}
		t.Rows = append(t.Rows, row{ID: fmt.Sprintf("faults-%d", i), Cells: c})
	}
	return t
}

// signedSeconds is a change in seconds, with its sign.
func signedSeconds(v float64) string {
	if v > 0 {
		return "+" + seconds(v)
	}
	return seconds(v)
}

// outageChart draws each point's mean outage, overall and per virtual
// user, with their intervals.
func outageChart(p *page, s *result.Sweep) chartRef {
	return faultChart(p, s, "outage at each point", "Outage at each point (lower is better)", "seconds without a completion (mean)",
		[]faultSeries{{result.OutageKey, "outage"}, {result.OutageVUMedianKey, "per VU, median"}, {result.OutageVUMaxKey, "per VU, max"}})
}

// faultSeries is one fault figure a chart draws, by key, and its label.
type faultSeries struct{ key, label string }

// faultChart is a bar chart of fault figures at each point: each one's
// mean, with its 95% interval as error bars, the baseline marked.
func faultChart(p *page, s *result.Sweep, name, title, yTitle string, series []faultSeries) chartRef {
	labels := make([][]string, len(s.Points))
	for i, pt := range s.Points {
		note := ""
		if isBaseline(s, i) && len(s.Baseline) > 0 {
			note = "baseline"
		}
		labels[i] = pointTick(s, pt, note)
	}
	var sets []obj
	for k, f := range series {
		data := gaps(len(s.Points))
		for i, pt := range s.Points {
			if st := pt.FaultStats[f.key]; st != nil {
				data[i] = obj{"y": st.Mean, "yMin": st.CILow, "yMax": st.CIHigh}
			}
		}
		c := color(k)
		sets = append(sets, obj{"label": f.label, "data": data, "backgroundColor": fade(c, 0.75), "borderColor": c, "borderWidth": 1,
			"errorBarColor": "#1d2330", "errorBarWhiskerColor": "#1d2330"})
	}
	return p.addChart(name, true, obj{
		"type": "barWithErrorBars",
		"data": obj{"labels": labels, "datasets": sets},
		"options": obj{
			"datasets": obj{"barWithErrorBars": obj{"maxBarThickness": 40}},
			"scales": obj{
				"x": pointTicks(obj{}),
				"y": obj{"beginAtZero": true, "title": axisTitle(yTitle)},
			},
			"plugins": obj{"title": chartTitle(title)},
		},
	})
}

// SweepFaultLines say, for each point, how its mean outage changed over
// its baseline's, with the interval and whether that is significant, and
// what its durability audits found; dbrig sweep prints them after its
// table.
func SweepFaultLines(s *result.Sweep) []string {
	var lines []string
	for i, p := range s.Points {
		label := paramsLabel(s.Varied, p.Params)
		if label == "" {
			label = fmt.Sprintf("point %d", i+1)
		}
		if c := p.FaultChanges[result.OutageKey]; c != nil {
			lines = append(lines, label+" "+outageChange(s, p, c))
		}
		if du := p.Durability; du != nil {
			line := fmt.Sprintf("%s: %s found %s of %s acknowledged missing", label, human.Count(du.Audits, "audit"),
				human.Thousands(float64(du.Missing)), human.Thousands(float64(du.Acknowledged)))
			if st := p.FaultStats[result.MissingKey]; du.Missing > 0 && st.N > 1 {
				line += fmt.Sprintf(" (a mean of %s per run, 95%% CI %s to %s)", fmtValue(st.Mean), fmtValue(st.CILow), fmtValue(st.CIHigh))
			}
			lines = append(lines, line+fmt.Sprintf(", %s in doubt", human.Thousands(float64(du.InDoubt))))
		}
	}
	return lines
}

// outageChange says how c, the change of point p's mean outage, moved it
// from its baseline's: "cut the outage by 11.6 s (95% CI 10.1 to 13.1
// s), from 21.4 s at server=ttl30 to 9.8 s: significant".
func outageChange(s *result.Sweep, p result.SweepPoint, c *result.Change) string {
	verb, by, lo, hi := "cut the outage by", -c.Diff, -c.High, -c.Low
	if c.Diff > 0 {
		verb, by, lo, hi = "lengthened the outage by", c.Diff, c.Low, c.High
	}
	interval := fmt.Sprintf("95%% CI %s to %s s", seconds(lo), seconds(hi))
	verdict := "significant"
	switch {
	case c.Low == c.High:
		interval, verdict = "no interval from one repetition", "not significant"
	case !c.Significant:
		verdict = "not significant, the interval includes 0"
	}
	base := s.Points[p.BaselinePoint]
	return fmt.Sprintf("%s %s s (%s), from %s s at %s to %s s: %s", verb, seconds(by), interval,
		seconds(base.FaultStats[result.OutageKey].Mean), paramsLabel(s.Varied, base.Params), seconds(p.FaultStats[result.OutageKey].Mean), verdict)
}

// faultHeads are the points table's fault columns of s.
func faultHeads(s *result.Sweep) []string {
	var h []string
	if s.HasFault(result.OutageKey) {
		h = append(h, "#outage s", "#outage 95% CI", "#per VU median / max s")
	}
	if s.Audited() {
		h = append(h, "#missing", "#in doubt")
	}
	return h
}

// faultCells are point p's cells for faultHeads.
func faultCells(s *result.Sweep, p result.SweepPoint) []cell {
	var cells []cell
	if s.HasFault(result.OutageKey) {
		cells = append(cells, outageCells(p)...)
	}
	if s.Audited() {
		cells = append(cells, auditCells(p)...)
	}
	return cells
}

// faultCaption is the points table's sentence on its fault columns.
func faultCaption(s *result.Sweep) string {
	var parts []string
	if s.HasFault(result.OutageKey) {
		parts = append(parts, "Outage: the mean of the repetitions' longest stretch without a completion around their action, with its 95% confidence interval, and the means of each virtual user's own, median / max")
	}
	if s.Audited() {
		parts = append(parts, "Missing and in doubt: what the repetitions' durability audits found, summed (hover for how many audits)")
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ". ") + "."
}
