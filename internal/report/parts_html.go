package report

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// partBlocks are a split run's sections: a merged document's client
// hosts, or a part's own document's part.
func partBlocks(d *result.Document) []block {
	switch {
	case d.Parts != nil:
		return []block{clientHostsBlock(d)}
	case d.Part != nil:
		return []block{partBlock(d.Part)}
	}
	return nil
}

// clientHostsBlock is a merged run's parts: each one's host, its share of
// the terminals and sessions, where its window's edges fell and the
// client CPU it took.
func clientHostsBlock(d *result.Document) block {
	ps := d.Parts
	t := &table{Head: heads("#part", "host", "#VUs", "#sessions", "#window start, ms", "#window end, ms", "#client CPU")}
	var starts, ends []time.Time
	for _, m := range ps.Members {
		starts, ends = append(starts, m.Part.WindowStart), append(ends, m.Part.WindowEnd)
	}
	for _, m := range ps.Members {
		part, rec := strconv.Itoa(m.Part.Index), m.Telemetry
		if m.Part.Index == ps.Marker {
			part, rec = part+" (marks)", d.Telemetry
		}
		sessions := "—"
		if m.Part.Connections > 0 {
			sessions = strconv.Itoa(m.Part.Connections)
		}
		t.Rows = append(t.Rows, row{ID: "part-" + strconv.Itoa(m.Part.Index), Cells: []cell{
			num(part), {Text: m.Host.Hostname}, num(strconv.Itoa(m.Part.VUs)), num(sessions),
			num(offsetMs(m.Part.WindowStart, starts)), num(offsetMs(m.Part.WindowEnd, ends)), num(clientCPU(rec)),
		}})
	}
	t.Caption = fmt.Sprintf("The %d parts of the split run %s: each one's host and share of the virtual users and sessions; "+
		"its window's edges on the server's clock, in ms after the earliest part's (clock offsets known to ±%.1f ms); "+
		"client CPU is the share of its host's CPUs the client used over the window. The marks (the database's figures) are the marking part's.",
		ps.Of, ps.RunID, ps.Spread.UncertaintyMs)
	b := block{Heading: "Client hosts", ID: "client-hosts", Table: t}
	for _, n := range ps.Missing {
		b.Notes = append(b.Notes, fmt.Sprintf("Part %d of %d is missing: no document; the client figures cover only the parts shown.", n, ps.Of))
	}
	return b
}

// offsetMs is how long after the earliest of all t came, in ms; "—" for
// an edge the part never reached.
func offsetMs(t time.Time, all []time.Time) string {
	all = slices.DeleteFunc(slices.Clone(all), time.Time.IsZero)
	if t.IsZero() || len(all) == 0 {
		return "—"
	}
	return fmt.Sprintf("+%.1f", float64(t.Sub(slices.MinFunc(all, time.Time.Compare)))/float64(time.Millisecond))
}

// clientCPU is the share of its host's CPUs a part's client used over
// the window, from its host telemetry; "—" without it.
func clientCPU(rec *telemetry.Recording) string {
	if rec == nil {
		return "—"
	}
	s := telemetry.Summarize(rec)
	if s.Host == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", s.Host.Client)
}

// partBlock is a part's own document's part: which run it belongs to,
// what it was told, and how its clock stood to the server's.
func partBlock(p *result.Part) block {
	const at = "15:04:05.000 MST"
	marker := "no"
	if p.Marker {
		marker = "yes: the document holds the database's marks"
	}
	rows := [][2]string{
		{"run", p.RunID}, {"run name", p.RunName}, {"marking part", marker},
		{"virtual users (this part's)", strconv.Itoa(p.VUs)},
	}
	if p.Connections > 0 {
		rows = append(rows, [2]string{"sessions (this part's)", strconv.Itoa(p.Connections)})
	}
	rows = append(rows,
		[2]string{"start", p.Schedule.Start.UTC().Format(at)}, [2]string{"window opens", p.Schedule.Open.UTC().Format(at)},
		[2]string{"window closes", p.Schedule.Close.UTC().Format(at)}, [2]string{"hold at each edge", fmt.Sprintf("%g ms", p.Schedule.HoldMs)},
		[2]string{"clock offset", fmt.Sprintf("%.3f ms ± %.3f ms, %.3f ms after the run", p.Clock.OffsetMs, p.Clock.UncertaintyMs, p.Clock.OffsetAfterMs)},
		[2]string{"flushes at the end edge", strconv.FormatInt(p.EndFlushes, 10)})
	return kvBlock(fmt.Sprintf("Part %d of %d", p.Index, p.Of), []kvGroup{{"A part of a split run", rows}},
		"The instants every part was told, on the server's clock, and how this part's clock stood to it (server = local + offset). "+
			"The figures are this part's share of the run's; dbrig merge makes the run's of all its parts' documents.")
}
