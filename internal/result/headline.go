package result

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

// The sides of a metric, as Metric.Headline and a threshold name them.
const (
	SideDB     = "db"
	SideClient = "client"
)

// Side is the side whose figure stands for m: the one the run chose, or,
// in a document made before runs chose, the database's where it has one.
// "" where neither side measured it.
func (m Metric) Side() string {
	switch {
	case m.Headline != "":
		return m.Headline
	case m.DB != nil:
		return SideDB
	case m.Client != nil:
		return SideClient
	}
	return ""
}

// On is m's figure on side; NaN where that side did not measure it.
func (m Metric) On(side string) float64 {
	p := m.Client
	if side == SideDB {
		p = m.DB
	}
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Value is the figure that stands for the metric (Side), which headlines,
// thresholds and sweeps use; NaN where neither side measured it.
func (m Metric) Value() float64 { return m.On(m.Side()) }

// setMetrics records the workload's values as d's metrics, in the order
// defs declares them, each with the side that stands for it. Where the two
// sides count the same thing and disagree beyond their tolerance, the
// client's figure stands: the database's counters count the work of every
// client of the database, the client's only this run's, which it timed
// itself. A line then says so, and why, as far as d's telemetry can tell:
// the other clients' sessions seen in the window, that none was, or that
// none could be looked for. Where they agree, the database's stands, as
// ever. compared false keeps the database's in any case: a merge whose
// missing parts' work the client's figures lack.
func (d *Document) setMetrics(defs []MetricDef, values map[string]workload.Value, compared bool) {
	var switched, dbOnly []Metric
	for _, def := range defs {
		v := values[def.Key]
		m := Metric{MetricDef: def, DB: v.DB, Client: v.Client}
		switch {
		case compared && v.Disagree():
			m.Headline = SideClient
			switched = append(switched, m)
		case v.DB != nil:
			m.Headline = SideDB
			if v.Client == nil {
				dbOnly = append(dbOnly, m)
			}
		case v.Client != nil:
			m.Headline = SideClient
		}
		d.Metrics = append(d.Metrics, m)
	}
	if len(switched) > 0 {
		d.Lines = append(d.Lines, headlineLine(switched, dbOnly, d.Telemetry, d.movedMarks()))
	}
}

// movedMarks names the two servers the window's edges were read on, "A,
// then B", where they were two (a failover in the window); "" otherwise.
func (d *Document) movedMarks() string {
	if len(d.Marks) == 2 && d.Marks[0].Server != "" && d.Marks[1].Server != "" && d.Marks[0].Server != d.Marks[1].Server {
		return d.Marks[0].Server + ", then " + d.Marks[1].Server
	}
	return ""
}

// headlineLine says which metrics take the client's figure, and why the
// database's was off; moved names the two servers the window's edges were
// read on, where they were two.
func headlineLine(switched, dbOnly []Metric, rec *telemetry.Recording, moved string) string {
	var figures []string
	for _, m := range switched {
		figures = append(figures, fmt.Sprintf("%s (%s, where the database counted %s)", m.Label, figure(*m.Client), figure(*m.DB)))
	}
	s := "Headline: the client's figure stands for " + and(figures) + ": "
	others, why := othersOf(rec)
	switch {
	case others == nil:
		return s + "the database's counters count every client's work, and whether other clients than this run were active could not be read (" + why + "); the client counted only this run's own"
	case others.Sessions == 0 && moved != "":
		return s + "no other client's session was seen in the measured database, and the window's edges were read on two servers (" + moved + "): the second, promoted in the window, lacks what the first committed and never sent it, which the client counted (the durability audit names it)"
	case others.Sessions == 0:
		return s + "no other client's session was seen in the measured database, so something else parted the two sides (a window edge read late, transactions in doubt, a client too brief for the sampler to see); the client counted only this run's own work"
	}
	s += fmt.Sprintf("%s %s active in the measured database during the window (%s), and the database's counters count their work with this run's",
		human.Count(others.Sessions, "other session"), wasWere(others.Sessions), clients(others.Clients))
	if len(dbOnly) > 0 {
		var labels []string
		for _, m := range dbOnly {
			labels = append(labels, m.Label)
		}
		s += "; " + and(labels) + ", which only the database counts, " + countsToo(len(labels))
	}
	return s
}

func countsToo(n int) string {
	if n == 1 {
		return "counts theirs too"
	}
	return "count theirs too"
}

// othersOf is what rec knows of other clients' sessions, or why it knows
// nothing.
func othersOf(rec *telemetry.Recording) (*telemetry.Others, string) {
	switch {
	case rec == nil:
		return nil, "the run recorded no telemetry"
	case rec.Others != nil:
		return rec.Others, ""
	case rec.Unavailable[telemetry.OtherSessions] != "":
		return nil, strings.TrimSuffix(rec.Unavailable[telemetry.OtherSessions], ".")
	case rec.Unavailable["database"] != "":
		return nil, rec.Unavailable["database"]
	}
	return nil, "the run recorded no database telemetry"
}

// clients names the clients and how many sessions each had, most first:
// `"dbrig 3f9a2c1b" ×3, a client without a name ×1`. Names are quoted as
// Go quotes them: they are the other clients' to choose, and a terminal
// must not act on them.
func clients(by map[string]int) string {
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(by[b], by[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(names))
	for i, n := range names {
		name := fmt.Sprintf("%q", n)
		if n == "" {
			name = "a client without a name"
		}
		parts[i] = fmt.Sprintf("%s ×%d", name, by[n])
	}
	return strings.Join(parts, ", ")
}

// figure is a metric's value as the summary's lines show one.
func figure(v float64) string {
	if math.Abs(v) >= 100 {
		return human.Thousands(v)
	}
	return fmt.Sprintf("%.2f", v)
}

// and joins a list as a sentence does: "a", "a and b", "a, b and c".
func and(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
