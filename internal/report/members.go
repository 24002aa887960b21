package report

import (
	"fmt"
	"strconv"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// The Multi-master nodes section: each node of a cluster whose nodes all
// take writes, over the measured window, a row each: how long flow
// control paused the cluster for it, its certification failures and the
// transactions it aborted for the others' write sets, its queues, what it
// sent and its own clients' commits; with the verdict's words on
// conflicts and flow control, and in the HTML page each node's
// certification failures and flow-control pauses per second over the run.

// membersKey is the block the HTML page adds the members' charts to.
const membersKey = "members"

// memberBlock is the section, for a run on such a cluster.
func memberBlock(d *result.Document, s telemetry.Summary) (block, bool) {
	if len(s.Members) == 0 {
		return block{}, false
	}
	t := &table{Class: "wide", Head: heads("node", "#paused %", "#flow-control pauses/s", "#cert failures/s", "#aborted for others/s",
		"#send queue", "#receive queue", "#replicated/s", "#commits/s", "#cluster size", "#readings"),
		Caption: "Each node of the cluster over the measured window, its own status read each interval: paused is the share of the time flow control stopped the cluster's writes " +
			"while the node was read; pauses are those it asked for, its queue of write sets to apply too long; cert failures its own transactions that lost to another node's at commit, " +
			"aborted for others those of its transactions it aborted to apply another node's write set first. The queues and the size are mean / max of the readings; commits are its own clients'."}
	for _, m := range s.Members {
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: m.Name}, num(fmt.Sprintf("%.1f", m.Paused)), num(fmt.Sprintf("%.2f", m.FlowSent)),
			num(fmt.Sprintf("%.1f", m.CertFailures)), num(fmt.Sprintf("%.1f", m.BFAborts)),
			num(level(m.SendQueue, fmtValue)), num(level(m.RecvQueue, fmtValue)), num(human.Bytes(m.ReplicatedBytes)),
			num(human.Thousands(m.Commits)), num(level(m.Size, fmtValue)), num(strconv.Itoa(m.Readings))}})
	}
	b := block{Heading: "Multi-master nodes", ID: "members", Table: t, key: membersKey}
	if v := result.VerdictOf(d); v != nil {
		for _, l := range append(v.Limits, v.Below...) {
			if l.Kind == result.LimitConflicts || l.Kind == result.LimitFlowControl {
				b.Notes = append(b.Notes, fmt.Sprintf("The verdict: %s at %.0f%% of its ceiling: %s.", l.Kind, l.Score*100, l.Why))
			}
		}
	}
	if p := d.Placement; p != nil {
		b.Notes = append(b.Notes, p.Line()+".")
	}
	return b, true
}

// memberCharts are each node's certification failures per second, and
// the share of each second flow control paused it, over the run, with
// what happened to the server marked.
func memberCharts(p *page, d *result.Document) ([]chartRef, string) {
	rec := d.Telemetry
	var cert, paused []obj
	for i, series := range rec.DB.Members {
		c, ps := memberLines(rec.Interval, series.Samples)
		cert = append(cert, seriesLine(series.Name, color(i), c))
		paused = append(paused, seriesLine(series.Name, color(i), ps))
	}
	marks := func() (obj, string) {
		plugins := beforeWindow(rec)
		return plugins, faultMarks(d, plugins) + gapMarks(rec, plugins)
	}
	certMarks, caption := marks()
	pausedMarks, _ := marks()
	charts := []chartRef{
		timeChart(p, "certification failures per node over time", "Certification failures", cert,
			obj{"y": obj{"beginAtZero": true, "title": axisTitle("per second")}}, certMarks),
		timeChart(p, "flow control per node over time", "Flow control", paused,
			obj{"y": obj{"beginAtZero": true, "max": 100, "title": axisTitle("% of the time paused")}}, pausedMarks),
	}
	for i := range charts {
		charts[i].Wide = true
	}
	return charts, caption
}

// memberLines are one node's certification failures per second and
// paused share (%) between its readings, as chart points, with a gap
// where more than one interval and a half passed without a reading.
func memberLines(interval float64, samples []telemetry.MemberSample) (cert, paused []obj) {
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		dt := b.T - a.T
		if dt <= 0 {
			continue
		}
		if dt > 1.5*interval {
			gap := obj{"x": (a.T + b.T) / 2, "y": nil}
			cert, paused = append(cert, gap), append(paused, gap)
			continue
		}
		rate := func(key string) any {
			x, okA := a.Counters[key]
			y, okB := b.Counters[key]
			if !okA || !okB || y < x {
				return nil
			}
			return (y - x) / dt
		}
		var p any
		if v, ok := rate(telemetry.MemberPausedNS).(float64); ok {
			p = v / 1e9 * 100
		}
		cert = append(cert, obj{"x": b.T, "y": rate(telemetry.MemberCertFailures)})
		paused = append(paused, obj{"x": b.T, "y": p})
	}
	return cert, paused
}
