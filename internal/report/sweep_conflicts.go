package report

import (
	"fmt"
	"slices"

	"github.com/dbrig/dbrig/internal/result"
)

// A sweep's conflicts: the retries, the aborts after the last retry and
// the share of the transactions' time retrying took, by point, with
// their intervals and their change over the baseline, where its runs
// retried, ran at an isolation level of their own or on several nodes.

// conflictsBlock is the table and the chart of the conflicts at each
// point.
func conflictsBlock(p *page, s *result.Sweep) (block, bool) {
	if !s.HasFault(result.RetriesKey) {
		return block{}, false
	}
	h := append(slices.Clone(s.Varied), "#n", "#retries/min", "#95% CI", "#change /min", "#change 95% CI", "significant", "#aborts/min", "#retrying %", "#95% CI")
	t := &table{Class: "wide", Head: heads(h...), Caption: "Each point's conflicts: the transactions the database asked the client to retry (deadlocks, serialization and certification failures), retried per minute, the mean of its repetitions with its 95% confidence interval (Student's t) and its change over the baseline with its 95% interval (Welch's t), significant where it excludes 0; the aborts, still failing after the last retry, per minute; and the share of the transactions' time spent in attempts that failed and the backoffs after them."}
	for i, pt := range s.Points {
		var c []cell
		for _, k := range s.Varied {
			c = append(c, cell{Text: pt.Params[k], Class: "param"})
		}
		st := pt.FaultStats[result.RetriesKey]
		if st == nil {
			continue
		}
		c = append(c, num(fmt.Sprint(st.N)), num(fmtValue(st.Mean)), num(fmtValue(st.CILow)+" – "+fmtValue(st.CIHigh)))
		var ch *change
		if x := pt.FaultChanges[result.RetriesKey]; x != nil {
			ch = &change{x.Diff, x.Low, x.High, x.Significant}
		}
		c = append(c, changeCells(ch, isBaseline(s, i), false, fmtValue)...)
		c = append(c, num(meanCell(pt.FaultStats[result.AbortsKey])))
		share := pt.FaultStats[result.RetryShareKey]
		c = append(c, num(meanCell(share)), num(ciCell(share)))
		t.Rows = append(t.Rows, row{Cells: c})
	}
	b := block{Heading: "Conflicts: retries and aborts", ID: "conflicts", Table: t, Notes: SweepConflictLines(s)}
	b.Charts = []chartRef{faultChart(p, s, "retries at each point", "Retries at each point (lower is better)", "per minute (mean)",
		[]faultSeries{{result.RetriesKey, "retries"}, {result.AbortsKey, "aborts after the last retry"}})}
	b.ChartCaption = "The transactions retried, and those still failing after the last retry, per minute at each point: the mean of the point's repetitions, with the 95% confidence interval of the mean as error bars. Points are in the matrix's order; the baseline is marked."
	return b, true
}

// meanCell and ciCell are a figure's mean, and its interval, "—" for none.
func meanCell(st *result.Stats) string {
	if st == nil {
		return "—"
	}
	return fmtValue(st.Mean)
}

func ciCell(st *result.Stats) string {
	if st == nil || st.N < 2 {
		return "—"
	}
	return fmtValue(st.CILow) + " – " + fmtValue(st.CIHigh)
}

// SweepConflictLines say, for each point but the baselines, how its
// retries per minute changed over its baseline's, with the interval and
// whether that is significant; dbrig sweep prints them after its table.
func SweepConflictLines(s *result.Sweep) []string {
	var lines []string
	for i, p := range s.Points {
		c, st := p.FaultChanges[result.RetriesKey], p.FaultStats[result.RetriesKey]
		if c == nil || st == nil || isBaseline(s, i) || p.BaselinePoint < 0 {
			continue
		}
		base := s.Points[p.BaselinePoint].FaultStats[result.RetriesKey]
		verdict := "not significant"
		if c.Significant {
			verdict = "significant"
		}
		lines = append(lines, fmt.Sprintf("Retries at %s: %s/min against %s/min at %s, %s/min [%s, %s] (%s)",
			paramsLabel(s.Varied, p.Params), fmtValue(st.Mean), fmtValue(base.Mean), paramsLabel(s.Varied, s.Points[p.BaselinePoint].Params),
			signed(c.Diff), signed(c.Low), signed(c.High), verdict))
	}
	return lines
}

// signed is a change with its sign, at fmtValue's precision.
func signed(v float64) string {
	if v > 0 {
		return "+" + fmtValue(v)
	}
	return fmtValue(v)
}
