package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestReplicationSection: a run on a primary with two replicas 5 ms
// away, one of them synchronous as a quorum, whose primary was lost 12 s
// in (dbrig run tproc-c --failover-at 12s): the report and report --text
// give a line per replica with its lags and bytes behind over the window,
// and the verdict's word on them; the HTML draws each replica's lag, a
// break in its lines where the primary could not be read, node2's ending
// where it was promoted. A run without replicas has no such section.
func TestReplicationSection(t *testing.T) {
	const in = "testdata/replication-run.json"
	d, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	s := telemetry.Summarize(d.Run.Telemetry)
	if len(s.Replicas) != 2 {
		t.Fatalf("the fixture's replicas: %+v, want node2 and node3", s.Replicas)
	}
	n2, n3 := s.Replicas[0], s.Replicas[1]
	want := []string{
		"Replication", "The verdict: replication at ", "commits waited for their synchronous replicas",
		"node2", "quorum (held commits)", level(n2.FlushLag, fmtValue), level(n2.Behind, human.Bytes),
		"node3", "quorum, then potential (held commits)", "streaming, then catchup", level(n3.ReplayLag, fmtValue),
	}
	inReport(t, in, d, want, []string{"Replica lag", "Replica behind the primary", "node1 lost", "no database telemetry"})
	// The primary went unread from 12.0 s to 13.9 s: node3's lines break
	// there; node2, promoted, has no reading after.
	rec := d.Run.Telemetry
	for _, series := range rec.DB.Replicas {
		flush, _, behind := replicaLines(rec.Interval, 1024, series.Samples)
		gaps := 0
		for i, pt := range behind {
			if pt["y"] == nil {
				gaps++
				if x := pt["x"].(float64); x < 12 || x > 15 || flush[i]["y"] != nil {
					t.Errorf("%s: a break at %.1f s, want it in the failover's gap, in every line", series.Name, x)
				}
			}
		}
		if want := map[string]int{"node2": 0, "node3": 1}[series.Name]; gaps != want {
			t.Errorf("%s: %d breaks in its lines, want %d", series.Name, gaps, want)
		}
	}
	if strings.Contains(render(t, "testdata/telemetry-run.json"), "Replica lag") {
		t.Error("a run without replicas has a replication section")
	}
}

// TestNodesSection: a run on a primary and two replicas on this host,
// the primary lost 12 s in (dbrig run tproc-c --failover-at 12s): the
// report and report --text give a line per node with the CPU its tree
// kept busy over the window, and the verdict's word on the server's CPU,
// the nodes' together; the HTML draws a line per node, node1's ending
// once it was lost, and stacks the nodes on the host's CPU chart in the
// server's place. A document without nodes (recorded before they were
// read) has no such section, and its server's tree is stacked as before.
func TestNodesSection(t *testing.T) {
	const in = "testdata/nodes-run.json"
	d, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	rec := d.Run.Telemetry
	s := telemetry.Summarize(rec)
	if len(s.Host.Nodes) != 3 {
		t.Fatalf("the fixture's nodes: %+v, want node1, node2 and node3", s.Host.Nodes)
	}
	want := []string{"Cluster nodes", "The verdict: server CPU at ", "the cluster's 3 nodes kept "}
	for _, n := range s.Host.Nodes {
		want = append(want, startPID(rec.Host.Facts.Nodes, n.Name), fmt.Sprintf("%.2f", n.Pct*2/100), pct1(n.Pct), pct1(n.Peak),
			fmt.Sprintf("%s %.2f", n.Name, n.Pct*2/100))
	}
	inReport(t, in, d, want, []string{"CPU by node", "each node of the server's (see Cluster nodes)", "node1 lost"})

	p := &page{}
	nodeChart(p, d.Run)
	lost := -1.0 // when node1 was lost: its line's last reading
	for _, set := range p.ChartSpecs[0].Config["data"].(obj)["datasets"].([]obj) {
		for _, pt := range set["data"].([]obj) {
			if set["label"] == "node1" && pt["y"] != nil {
				lost = pt["x"].(float64)
			}
		}
	}
	if lost < 12 || lost > 14 {
		t.Errorf("node1's line ends at %.1f s, want it to end at its loss, 12 s in", lost)
	}
	if labels := cpuLabels(rec); !slices.Equal(labels, []string{"client", "node1", "node2", "node3", "other", "iowait", "steal"}) {
		t.Errorf("the host's CPU chart stacks %v, want each node in the server's place", labels)
	}

	old, err := Load("testdata/replication-run.json")
	if err != nil {
		t.Fatal(err)
	}
	if labels := cpuLabels(old.Run.Telemetry); !slices.Contains(labels, "server") || slices.Contains(labels, "node1") {
		t.Errorf("a document without nodes: the host's CPU chart stacks %v, want the server", labels)
	}
	if strings.Contains(render(t, "testdata/replication-run.json"), "Cluster nodes") {
		t.Error("a document without nodes has a Cluster nodes section")
	}
}

// cpuLabels are the series the host's CPU chart stacks.
func cpuLabels(rec *telemetry.Recording) []string {
	p := &page{}
	cpuChart(p, rec, obj{})
	var out []string
	for _, set := range p.ChartSpecs[0].Config["data"].(obj)["datasets"].([]obj) {
		out = append(out, set["label"].(string))
	}
	return out
}
