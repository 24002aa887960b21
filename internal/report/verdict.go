package report

import (
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/result"
)

// verdictCaption says how the verdict's scale reads, under its table.
const verdictCaption = "Each resource's use as a share of its ceiling: 90% of the CPUs the client or the server may use (or of the host's, when it was saturated), " +
	"30% of database time for a kind of wait (storage takes the data waits that reached the disk, the page cache those the OS served, replication the commits' waits for their replicas), " +
	"half the virtual users' time spent between transactions for think time. At 100% or more it limited the run."

// verdictBlock is the run page's "What limited this run": the verdict's
// paragraph, a bar per resource judged, and the figures behind each.
func verdictBlock(p *page, d *result.Document) (block, bool) {
	v := result.VerdictOf(d)
	if v == nil {
		return block{}, false
	}
	b := block{Heading: "What limited this run", ID: "verdict", Notes: []string{strings.TrimPrefix(v.Line(), "What limited this run: ")}}
	all := append(append([]result.Limit{}, v.Limits...), v.Below...)
	if len(all) == 0 {
		return b, true
	}
	t := &table{Head: heads("resource", "#of its ceiling", "figures"), Caption: verdictCaption}
	var labels []string
	var data, colors []any
	for _, l := range all {
		c := num(fmt.Sprintf("%.0f%%", l.Score*100))
		col := color(0)
		if l.Score >= 1 {
			c.Class, col = "num bad", color(3)
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: l.Kind}, c, {Text: l.Why}}})
		labels = append(labels, l.Kind)
		data = append(data, min(l.Score*100, 200))
		colors = append(colors, col)
	}
	b.Table = t
	b.Charts = []chartRef{p.addChart("what limited this run", true, obj{
		"type": "bar",
		"data": obj{"labels": labels, "datasets": []obj{{"label": "% of its ceiling", "data": data, "backgroundColor": colors, "borderWidth": 0}}},
		"options": obj{
			"indexAxis": "y",
			"scales":    obj{"x": obj{"min": 0, "suggestedMax": 120, "title": axisTitle("% of its ceiling (100 = limited the run; bars stop at 200)")}},
			"plugins":   obj{"title": chartTitle("What limited this run"), "legend": obj{"display": false}},
		},
	})}
	b.ChartCaption = "Each resource's use against its ceiling; red: at it or past it."
	return b, true
}

// verdictCell is what limited a point's repetitions: the kind most of
// them name, with how many did; each one's verdict in the title.
func verdictCell(p result.SweepPoint) cell {
	summary, each := p.LimitedBy()
	if summary == "" {
		return cell{Text: "—"}
	}
	return cell{Text: summary, Title: strings.Join(each, "; "), Class: "verdict"}
}
