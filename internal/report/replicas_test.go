package report

import (
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
