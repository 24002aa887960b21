package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// The Replication section: each replica of the primary over the measured
// window, a row each (report --text's line per replica), with the
// verdict's word on the commits that waited for them, and in the HTML
// page its lag over the whole run, in time and in bytes, with what
// happened to the server marked.

// replicasKey is the block the HTML page adds the lag charts to.
const replicasKey = "replicas"

// replicaBlock is the section, for a run whose server had replicas.
func replicaBlock(d *result.Document, s telemetry.Summary) (block, bool) {
	if len(s.Replicas) == 0 {
		return block{}, false
	}
	t := &table{Class: "wide", Head: heads("replica", "sync state", "state", "#write lag ms", "#flush lag ms", "#replay lag ms", "#behind", "#readings"),
		Caption: "Each replica over the measured window, as its primary saw it with the counters each interval, mean / max of the readings: " +
			"the lags are how long the primary's latest log took to be written, flushed and replayed there, the replica's reply included; " +
			"behind is how much of the primary's log it had yet to replay. The states are the database's words, each change in the window in turn."}
	for _, r := range s.Replicas {
		sync := strings.Join(r.SyncStates, ", then ")
		if r.Synchronous {
			sync += " (held commits)"
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: r.Name}, {Text: sync}, {Text: strings.Join(r.States, ", then ")},
			num(level(r.WriteLag, fmtValue)), num(level(r.FlushLag, fmtValue)), num(level(r.ReplayLag, fmtValue)),
			num(level(r.Behind, human.Bytes)), num(strconv.Itoa(r.Readings))}})
	}
	b := block{Heading: "Replication", ID: "replication", Table: t, key: replicasKey}
	if v := result.VerdictOf(d); v != nil {
		for _, l := range append(v.Limits, v.Below...) {
			if l.Kind == result.LimitReplication {
				b.Notes = append(b.Notes, fmt.Sprintf("The verdict: replication at %.0f%% of its ceiling: %s.", l.Score*100, l.Why))
			}
		}
	}
	return b, true
}

// level is a gauge's mean and highest, "—" where no reading had it.
func level(l telemetry.Level, f func(float64) string) string {
	if l.N == 0 {
		return "—"
	}
	return f(l.Mean) + " / " + f(l.Max)
}

// replicaCharts are each replica's lag over the run: its flush lag
// (solid) and replay lag (dashed) in ms, on a log scale that shows a few
// ms and a stall's seconds alike, and how far behind it was; a reading
// missing is a gap in its lines. What happened to the server is marked
// as on the throughput chart, and the caption's sentences for it come
// back.
func replicaCharts(p *page, d *result.Document) ([]chartRef, string) {
	rec := d.Telemetry
	var lags, behind []obj
	unit, per := byteUnit(rec.DB.Replicas)
	for i, series := range rec.DB.Replicas {
		flush, replay, bytes := replicaLines(rec.Interval, per, series.Samples)
		lags = append(lags, seriesLine(series.Name+" flush", color(i), flush))
		dashed := seriesLine(series.Name+" replay", color(i), replay)
		dashed["borderDash"] = []int{4, 3}
		lags = append(lags, dashed)
		behind = append(behind, seriesLine(series.Name, color(i), bytes))
	}
	// Each chart its own plugins: a chart's title goes in them.
	marks := func() (obj, string) {
		plugins := beforeWindow(rec)
		return plugins, faultMarks(d, plugins) + gapMarks(rec, plugins)
	}
	lagMarks, caption := marks()
	behindMarks, _ := marks()
	charts := []chartRef{
		timeChart(p, "replica lag over time", "Replica lag", lags,
			obj{"y": obj{"type": "logarithmic", "title": axisTitle("ms (log scale)")}}, lagMarks),
		timeChart(p, "replica bytes behind over time", "Replica behind the primary", behind,
			obj{"y": obj{"beginAtZero": true, "title": axisTitle(unit + " of log not yet replayed")}}, behindMarks),
	}
	// A row each, as the throughput's: the events' labels need the width.
	for i := range charts {
		charts[i].Wide = true
	}
	return charts, caption
}

// replicaLines are one replica's flush lag, replay lag and bytes behind
// (in units of per bytes) as chart points, null where a reading lacks
// one, with a gap where more than one interval and a half passed
// without a reading.
func replicaLines(interval, per float64, samples []telemetry.ReplicaSample) (flush, replay, behind []obj) {
	for i, s := range samples {
		if i > 0 && s.T-samples[i-1].T > 1.5*interval {
			gap := obj{"x": (s.T + samples[i-1].T) / 2, "y": nil}
			flush, replay, behind = append(flush, gap), append(replay, gap), append(behind, gap)
		}
		// A lag not measured is a nil pointer, null in the chart.
		flush = append(flush, obj{"x": s.T, "y": s.FlushLag})
		replay = append(replay, obj{"x": s.T, "y": s.ReplayLag})
		var y any
		if v, ok := s.Behind(); ok {
			y = v / per
		}
		behind = append(behind, obj{"x": s.T, "y": y})
	}
	return flush, replay, behind
}

// byteUnit is the unit the bytes chart reads in, by the most any replica
// was behind: B, KiB, MiB or GiB, with its size.
func byteUnit(series []telemetry.ReplicaSeries) (string, float64) {
	most := 0.0
	for _, s := range series {
		for _, r := range s.Samples {
			if v, ok := r.Behind(); ok {
				most = max(most, v)
			}
		}
	}
	unit, per := "B", 1.0
	for i, u := range []string{"KiB", "MiB", "GiB"} {
		if size := float64(int64(1) << (10 * (i + 1))); most >= size {
			unit, per = u, size
		}
	}
	return unit, per
}
