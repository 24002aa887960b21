//go:build unix

package cli_test

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestGaleraMariaDB: TPROC-C on a 3-node Galera cluster through its URL
// of three hosts. The VUs go round-robin over the nodes, their conflicts
// at certification come back as retries, counted by type; the database's
// side is every node's counters summed and agrees with the client's;
// check passes on every node. Then a node is killed mid-run: the run
// carries on on the other two, its VUs moved, the kill marked, and the
// durability audit finds every acknowledged New-Order on both survivors.
func TestGaleraMariaDB(t *testing.T) {
	t.Parallel()
	c := mariatest.NewCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.CreateDB(ctx, "galera"); err != nil {
		t.Fatal(err)
	}
	u := c.URLFor("galera")
	nodes, err := c.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// One warehouse: every node writes it (two took 54 s to build over
	// Galera's replication).
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1")

	path := filepath.Join(dir, "spread.json")
	o := mustRun(t, "run", "tproc-c", "--target", u, "--vus", "6", "--rampup", "2s", "--duration", "12s", "--json", path)
	wantIn(t, "the summary", o.stdout, "The database's side is the 3 nodes' own counters summed")
	doc, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	p := doc.Placement
	if p == nil || p.Affinity != "round-robin" || len(p.Nodes) != 3 {
		t.Fatalf("placement %+v, want round-robin over 3 nodes", p)
	}
	for _, n := range p.Nodes {
		if n.Sessions != 2 {
			t.Errorf("node %s took %d sessions, want 2 of the 6 VUs", n.Addr, n.Sessions)
		}
	}
	var retries int64
	for _, tx := range doc.Transactions {
		retries += tx.Retries
		if tx.Errors != tx.Aborts {
			t.Errorf("%s: %d errors, %d aborts: an error that was no conflict (%s)", tx.Name, tx.Errors, tx.Aborts, tx.ErrorSample)
		}
	}
	if retries == 0 {
		t.Error("no retries with three nodes writing the one warehouse")
	}
	tpm, _ := doc.Metric("tpm")
	if tpm.DB == nil {
		t.Fatal("no database-side TPM on the cluster")
	}
	// A transaction aborted for another node's write set as it commits
	// still counts twice on the server (dbtarget/mariadb's Xacts), and no
	// status variable counts it apart: the database may count more than
	// the client by at most the nodes' aborts for others' write sets in
	// the window, never less than the client by more than 1%.
	var bf float64
	for _, m := range telemetry.Summarize(doc.Telemetry).Members {
		bf += m.BFAborts * m.Seconds
	}
	if apart := (*tpm.DB - *tpm.Client) * doc.WindowSeconds / 60; apart > bf+12 || apart < -*tpm.Client*doc.WindowSeconds/60/100 {
		t.Errorf("TPM %.0f by the nodes, %.0f by the client: %.0f transactions apart over the window, with %.0f aborted for others' write sets", *tpm.DB, *tpm.Client, apart, bf)
	}
	if doc.Telemetry == nil || doc.Telemetry.DB == nil || len(doc.Telemetry.DB.Members) != 3 {
		t.Error("the telemetry read not every node of the cluster")
	}
	for _, n := range nodes {
		on, err := url.Parse(n.URL)
		if err != nil {
			t.Fatal(err)
		}
		on.Path = "/galera"
		checkPasses(t, on.String())
	}

	killed := filepath.Join(dir, "killed.json")
	o = mustRun(t, "run", "tproc-c", "--target", u, "--vus", "6", "--rampup", "2s", "--duration", "12s", "--json", killed,
		"--kill-node-at", "6s", "--kill-node", "node2", "--server-dir", c.Dir(), "--audit-durability")
	wantIn(t, "the run's notes", o.stdout, "node node2")
	wantIn(t, "the run's warnings", o.stderr, "its sessions go to the next node that does")
	doc, err = result.Read(killed)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Events) != 1 || !strings.Contains(doc.Events[0].What, "node2") || len(doc.ActionOutages) != 1 {
		t.Errorf("events %+v, outages %+v: want the kill marked, and its outage", doc.Events, doc.ActionOutages)
	}
	d := doc.Durability
	if d == nil || d.Acknowledged == 0 || d.Missing != 0 || len(d.Nodes) != 3 {
		t.Fatalf("durability %+v: want every acknowledged New-Order found, on each node", d)
	}
	audited := 0
	for _, n := range d.Nodes {
		switch {
		case n.Addr == nodes[1].Addr:
			if n.Lost == "" {
				t.Errorf("node2 (%s) audited after its kill: %+v", n.Addr, n)
			}
		case n.Lost != "" || n.Missing != 0 || n.Consistent == nil || !*n.Consistent:
			t.Errorf("surviving node %+v: want audited, nothing missing, consistent", n)
		default:
			audited++
		}
	}
	if audited != 2 {
		t.Errorf("%d surviving nodes audited, want 2", audited)
	}
	if len(doc.Placement.Moves) == 0 || doc.Placement.Moves[0].From != nodes[1].Addr {
		t.Errorf("moves %+v, want node2's sessions moved", doc.Placement.Moves)
	}
}
