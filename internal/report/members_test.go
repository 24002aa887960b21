package report

import (
	"fmt"
	"testing"

	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestMembersSection: a run on a 3-node Galera cluster whose third node
// was killed 20 s in (dbrig run tproc-c --vus 6 --kill-node-at 20s
// --audit-durability, 4 warehouses): the report and report --text give
// a row per node with its pauses, certification failures and commits,
// the verdict's words on conflicts, where the sessions went and which
// moved, and the audit of each node; the HTML draws each node's
// certification failures and flow control, node3's line ending at its
// loss.
func TestMembersSection(t *testing.T) {
	const in = "testdata/galera-kill-run.json"
	d, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	s := telemetry.Summarize(d.Run.Telemetry)
	if len(s.Members) != 3 {
		t.Fatalf("the fixture's members: %+v, want three", s.Members)
	}
	want := []string{"Multi-master nodes", "The verdict: conflicts at ", "at certification",
		"Sessions opened by node (round-robin)", "moved from 127.0.0.1:36443 to 127.0.0.1:34075",
		"Audited on each node", "127.0.0.1:36443 lost, not audited"}
	for _, m := range s.Members {
		want = append(want, m.Name, fmt.Sprintf("%.1f", m.CertFailures))
	}
	inReport(t, in, d, want, []string{"Certification failures", "Flow control"})

	p := &page{}
	memberCharts(p, d.Run)
	last := -1.0
	for _, set := range p.ChartSpecs[0].Config["data"].(obj)["datasets"].([]obj) {
		for _, pt := range set["data"].([]obj) {
			if set["label"] == "127.0.0.1:36443" && pt["y"] != nil {
				last = pt["x"].(float64)
			}
		}
	}
	if last < 18 || last > 21 {
		t.Errorf("the killed node's line ends at %.1f s, want at its loss, 20 s in", last)
	}
}
