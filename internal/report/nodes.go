package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// The Cluster nodes section: each node of the server the run was on (a
// primary and its replicas) over the measured window, a row each (report
// --text's line per node), with the verdict's word on the server's CPU,
// which is theirs together; in the HTML page each node's CPU over the
// whole run, a line each, with what happened to the server marked, and
// the nodes stacked on the host's CPU chart in place of the server.

// nodesKey is the block the HTML page adds the nodes' chart to.
const nodesKey = "nodes"

// nodeBlock is the section, for a run on a server of several nodes.
func nodeBlock(d *result.Document, s telemetry.Summary) (block, bool) {
	if s.Host == nil || len(s.Host.Nodes) == 0 {
		return block{}, false
	}
	facts := d.Telemetry.Host.Facts
	host := float64(max(facts.OnlineCPUs, len(s.Host.PerCPU), d.Host.CPUs, 1))
	total, _ := s.Host.ServerCPU()
	t := &table{Class: "wide", Head: heads("node", "#pid", "#CPUs busy", "#% of all CPUs", "#busiest interval %", "#of the nodes' CPU"),
		Caption: fmt.Sprintf("Each node over the measured window: the CPU its processes (the tree of its root process, its postmaster) kept busy, "+
			"the mean over the whole window, a node lost counting nothing after it, and its busiest interval; pid is its root process as the run found it at its start. "+
			"Together the nodes kept %.2f of the host's %.0f CPUs busy: the server's CPU, which the verdict judges, since they share the host's CPUs.", total*host/100, host)}
	for _, n := range s.Host.Nodes {
		share := "—"
		if total > 0 {
			share = pct1(100*n.Pct/total) + "%"
		}
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: n.Name}, num(startPID(facts.Nodes, n.Name)),
			num(fmt.Sprintf("%.2f", n.Pct*host/100)), num(pct1(n.Pct)), num(pct1(n.Peak)), num(share)}})
	}
	for _, n := range facts.Nodes {
		if n.PID == 0 && !slices.ContainsFunc(s.Host.Nodes, func(c telemetry.NodeCPU) bool { return c.Name == n.Name }) {
			t.Rows = append(t.Rows, row{Cells: []cell{{Text: n.Name}, {Text: "not on this host, or its process not known", Span: 5}}})
		}
	}
	b := block{Heading: "Cluster nodes", ID: "nodes", Table: t, key: nodesKey}
	if v := result.VerdictOf(d); v != nil {
		for _, l := range append(v.Limits, v.Below...) {
			if l.Kind == result.LimitServerCPU {
				b.Notes = append(b.Notes, fmt.Sprintf("The verdict: server CPU at %.0f%% of its ceiling: %s.", l.Score*100, l.Why))
			}
		}
	}
	return b, true
}

// startPID is the root process of the node named name as the run found
// it at its start, "—" where it did not.
func startPID(nodes []telemetry.Node, name string) string {
	i := slices.IndexFunc(nodes, func(n telemetry.Node) bool { return n.Name == name })
	if i < 0 || nodes[i].PID == 0 {
		return "—"
	}
	return strconv.Itoa(nodes[i].PID)
}

// nodeNames are the nodes any host sample read, by name.
func nodeNames(rec *telemetry.Recording) []string {
	var names []string
	for _, s := range rec.Host.Samples {
		for name := range s.Nodes {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// nodeColor is the i-th node's colour on the CPU charts, none of the
// client's, the IO wait's or the steal's there.
func nodeColor(i int) string { return color([]int{1, 2, 6, 4, 7}[i%5]) }

// nodeChart is each node's CPU over the run, a line each, a reading
// missing (the node lost, or its process not yet read twice) a gap in
// its line; what happened to the server is marked as on the throughput
// chart, and the caption's sentences for it come back.
func nodeChart(p *page, d *result.Document) (chartRef, string) {
	rec := d.Telemetry
	names := nodeNames(rec)
	lines := make([][]obj, len(names))
	for _, s := range charted(rec) {
		for i, name := range names {
			var y any
			if v, ok := s.Nodes[name]; ok {
				y = v
			}
			lines[i] = append(lines[i], obj{"x": s.T, "y": y})
		}
	}
	sets := make([]obj, len(names))
	for i, name := range names {
		sets[i] = seriesLine(name, nodeColor(i), lines[i])
	}
	plugins := beforeWindow(rec)
	marks := faultMarks(d, plugins) + gapMarks(rec, plugins)
	ref := timeChart(p, "CPU by node over time", "CPU by node", sets,
		obj{"y": obj{"beginAtZero": true, "title": axisTitle("% of all CPUs")}}, plugins)
	ref.Wide = true
	return ref, marks
}
