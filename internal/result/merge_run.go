package result

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// merge makes the run's document of its parts (checked by gather): the
// marker's (or, without it, the first part's) run, the parts' figures
// summed, and the workload's summary of them.
func merge(parts []partDoc, missing []int, o MergeOptions) (*Document, error) {
	if o.Summarize == nil {
		return nil, errors.New("merge: no Summarize: the workload's summary cannot be made again")
	}
	base, marker := parts[0], 0
	if k := slices.IndexFunc(parts, func(p partDoc) bool { return p.Part.Marker }); k >= 0 {
		base, marker = parts[k], parts[k].Part.Index
	}
	d := &Document{
		SchemaVersion: base.SchemaVersion, Tool: base.Tool, Workload: base.Workload, Target: base.Target,
		Host: base.Host, Config: sharedConfig(base.Config), StartedAt: base.Part.Schedule.Start.UTC(),
		WindowSeconds: base.WindowSeconds, PrimaryMetric: base.PrimaryMetric, PrimaryTx: base.PrimaryTx,
		SeriesTypes: base.SeriesTypes, ServerLost: base.ServerLost, Telemetry: base.Telemetry,
		Counters: map[string]int64{},
		Parts:    &Parts{Of: base.Part.Of, RunID: base.Part.RunID, Missing: missing, Marker: marker, Spread: spread(parts)},
	}
	if marker != 0 {
		d.Marks = markerMarks(base, parts)
	}
	for _, p := range parts {
		d.add(p)
	}
	slices.SortStableFunc(d.Events, func(a, b Event) int { return cmp.Compare(a.T, b.T) })
	if l := leakNote(d.Parts.Spread, base.Part.Schedule.HoldMs); l != "" {
		d.Notes = append(d.Notes, l)
	}
	res, err := d.figures(parts, base)
	if err != nil {
		return nil, err
	}
	d.Steady = steadyOf(d)
	if err := d.summarize(parts, res, o); err != nil {
		return nil, err
	}
	return d, nil
}

// add records part p in d: its member row, its counters summed and its
// events and notes, each named as the part's.
func (d *Document) add(p partDoc) {
	n := p.Part.Index
	d.Parts.Present = append(d.Parts.Present, n)
	m := Member{Part: *p.Part, Host: p.Host, Interrupted: p.Interrupted, Sessions: p.Sessions, Telemetry: p.Telemetry}
	if n == d.Parts.Marker {
		m.Telemetry = nil // the document's own
	}
	d.Parts.Members = append(d.Parts.Members, m)
	d.Interrupted = d.Interrupted || p.Interrupted
	for k, v := range p.Counters {
		d.Counters[k] += v
	}
	for k, v := range p.ErrorClasses {
		if d.ErrorClasses == nil {
			d.ErrorClasses = map[string]int64{}
		}
		d.ErrorClasses[k] += v
	}
	for _, e := range p.Events {
		d.Events = append(d.Events, Event{T: e.T, What: fmt.Sprintf("part %d: %s", n, e.What)})
	}
	d.Outages = unionSpans(d.Outages, p.Outages)
	d.Stalls = unionSpans(d.Stalls, p.Stalls)
	if p.Interrupted {
		d.Notes = append(d.Notes, fmt.Sprintf("part %d was interrupted %.0f s into the window", n, p.WindowSeconds))
	}
	for _, note := range p.Notes {
		if note != p.Part.Note() {
			d.Notes = append(d.Notes, fmt.Sprintf("part %d: %s", n, note))
		}
	}
}

// leakNote says when the parts' window edges fell further apart than
// half the hold, in which every part stays still while the marks are
// read: some part's transactions may then fall on the wrong side of the
// marks. "" when they did not.
func leakNote(s Spread, holdMs float64) string {
	if worst := max(s.StartMs, s.EndMs); worst > holdMs/2 {
		return fmt.Sprintf("The parts' window edges fell up to %.1f ms apart, more than half the %g ms hold: a part's transactions may fall outside the database's marks, so the client and database figures may differ by them",
			worst, holdMs)
	}
	return ""
}

// unionSpans is a and b in one list, by start.
func unionSpans(a, b []Span) []Span {
	out := append(a, b...)
	slices.SortStableFunc(out, func(x, y Span) int { return cmp.Compare(x.At, y.At) })
	return out
}

// figures merges the parts' transactions, seconds and sessions into d,
// and returns them as the driver's result of the run would have been,
// over base's window (the marker's).
func (d *Document) figures(parts []partDoc, base partDoc) (*driver.Result, error) {
	tx, err := mergeTx(parts)
	if err != nil {
		return nil, err
	}
	if err := d.transactions(tx); err != nil {
		return nil, err
	}
	if d.Series, err = mergeSeries(parts, d.Parts.Marker); err != nil {
		return nil, err
	}
	pool, err := mergeSessions(parts)
	if err != nil {
		return nil, err
	}
	res := &driver.Result{Started: d.StartedAt, Interrupted: d.Interrupted, Tx: tx, ErrorClasses: d.ErrorClasses, Pool: pool}
	for _, p := range d.Series {
		res.Series = append(res.Series, driver.Point{T: p.T, Phase: p.Phase, Counts: p.Counts, Errors: p.Errors, InDoubt: p.InDoubt, Latency: p.Latency})
	}
	if pool != nil {
		for _, p := range d.Series {
			pool.Waits = append(pool.Waits, p.Wait)
		}
		if d.Sessions, err = sessionsOf(pool); err != nil {
			return nil, err
		}
	}
	if start := base.Part.WindowStart; !start.IsZero() {
		res.WindowStart = start
		res.WindowEnd = start.Add(time.Duration(d.WindowSeconds * float64(time.Second)))
	}
	return res, nil
}

// summarize has the workload make the run's metrics, lines, extra and
// audit from the merged figures, and adds the lines that say how the
// parts met, and which are missing.
func (d *Document) summarize(parts []partDoc, res *driver.Result, o MergeOptions) error {
	f := workload.Figures{Config: d.Config, Result: res, Counters: d.Counters}
	for _, p := range parts {
		f.Terminals += p.Part.VUs
		f.Sessions += cmp.Or(p.Part.Connections, p.Part.VUs)
	}
	if len(d.Marks) == 2 {
		f.Start, f.End = d.Marks[0].Reading(), d.Marks[1].Reading()
	}
	f.End.Lost = d.ServerLost != nil && len(d.Marks) < 2
	sum, err := o.Summarize(f)
	if err != nil {
		return err
	}
	for _, a := range sum.Audit {
		d.Audit = append(d.Audit, AuditItem(a))
	}
	d.Extra = sum.Extra
	if len(d.Parts.Missing) > 0 {
		d.Lines = append(d.Lines, d.missingLine(f.Terminals))
	}
	d.Lines = append(d.Lines, sum.Lines...)
	d.setMetrics(Defs(o.Info), sum.Values, len(d.Parts.Missing) == 0)
	d.Lines = append(d.Lines, d.partsLine())
	return nil
}

// partsLine says which parts the run merged, from how many hosts, and
// how close together their windows' edges fell.
func (d *Document) partsLine() string {
	hosts := map[string]bool{}
	for _, m := range d.Parts.Members {
		hosts[m.Host.Hostname] = true
	}
	s := d.Parts.Spread
	return fmt.Sprintf("%s of %d on %d %s: windows started within %.1f ms and ended within %.1f ms of each other (clock offsets known to ±%.1f ms)",
		capital(partList(d.Parts.Present)), d.Parts.Of, len(hosts), plural(len(hosts), "host", "hosts"), s.StartMs, s.EndMs, s.UncertaintyMs)
}

// missingLine says which parts are missing, so the client's figures
// cover only the present parts' terminals.
func (d *Document) missingLine(present int) string {
	m := d.Parts.Missing
	of := ""
	c := workload.ReadConfig(d.Config)
	if vus := c.Int("vus"); c.Err() == nil {
		of = fmt.Sprintf(" of %d", vus)
	}
	db := "the database's all of them"
	if d.Parts.Marker == 0 {
		db = "and there are no database figures: the part that took the marks is missing"
	}
	return fmt.Sprintf("%s of %d %s missing: the client figures cover only the present parts' %d%s VUs, %s",
		capital(partList(m)), d.Parts.Of, plural(len(m), "is", "are"), present, of, db)
}

// capital is s with its first letter a capital (partList's start with
// "part").
func capital(s string) string {
	return "P" + s[1:]
}
