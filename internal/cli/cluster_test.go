package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// clusterTPROCC starts a cluster of topology topo of the test's own and
// builds one warehouse on it, through the URL that follows the primary.
func clusterTPROCC(t *testing.T, topo server.Topology) (*postgres.Cluster, string) {
	t.Helper()
	c := pgtest.NewCluster(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.CreateDB(ctx, "tprocc"); err != nil {
		t.Fatal(err)
	}
	u := c.URLFor("tprocc")
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1")
	return c, u
}

// TestFailoverPatroniPostgres is the acceptance run, shortened: a
// primary and two replicas, one synchronous, kept by Patroni; the run
// loses the primary's machine 5 s in, Patroni promotes a replica once the
// lease runs out, the virtual users follow it, and nothing acknowledged
// is missing after it.
func TestFailoverPatroniPostgres(t *testing.T) {
	t.Parallel()
	c, u := clusterTPROCC(t, server.Topology{Replicas: 2, SyncReplicas: 1, HA: postgres.HAPatroni, TTL: 6 * time.Second, LoopWait: time.Second})
	out := filepath.Join(t.TempDir(), "r.json")
	o := dbrig(t, "run", "tproc-c", "--target", u, "--vus", "4", "--rampup", "1s", "--duration", "15s",
		"--failover-at", "5s", "--server-dir", c.Dir(), "--audit-durability", "--json", out)
	if o.code != 0 {
		t.Fatalf("exit %d, want 0: the run rides out a failover", o.code)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	var lost, promoted string
	for _, e := range doc.Events {
		switch {
		case strings.Contains(e.What, "lost: SIGKILL to its Patroni"):
			lost = e.What
		case strings.HasPrefix(e.What, "new primary "):
			promoted = e.What
		}
	}
	if lost == "" || promoted == "" || strings.HasPrefix(promoted, "new primary node1 ") {
		t.Errorf("events %+v, want node1 lost and another node named the new primary", doc.Events)
	}
	wantIn(t, "stdout", o.stdout, promoted)
	if len(doc.Outages) != 1 || doc.Outages[0].Seconds < 3 {
		t.Fatalf("outages %+v, want one, of about the lease's 6 s", doc.Outages)
	}
	// No transaction completes while there is no primary to reach.
	outage(t, doc, 4, doc.Outages[0].At, doc.Outages[0].At+doc.Outages[0].Seconds)
	movedMarks(t, doc)
	lostNode(t, doc, promoted)
	d := doc.Durability
	if d == nil || d.Missing != 0 || d.Acknowledged == 0 {
		t.Fatalf("durability %+v, want every acknowledged New-Order found on the new primary", d)
	}
	wantIn(t, "stdout", o.stdout, fmt.Sprintf("0 missing; %d in doubt", d.InDoubt))
}

// lostNode checks that the run kept each node's CPU: three nodes with
// their postmasters at its start, named by their addresses (Patroni
// gives every node its scope as cluster_name), the lost primary's absent
// from the samples once a new primary was named, the others there.
func lostNode(t *testing.T, doc *result.Document, promoted string) {
	t.Helper()
	h := doc.Telemetry.Host
	if len(h.Facts.Nodes) != 3 || h.Facts.Nodes[0].PID != h.Facts.ServerPID {
		t.Fatalf("nodes %+v: want three, node1 the server (pid %d)", h.Facts.Nodes, h.Facts.ServerPID)
	}
	at := -1.0
	for _, e := range doc.Events {
		if e.What == promoted {
			at = e.T
		}
	}
	lost := h.Facts.Nodes[0].Name
	after := 0
	for _, s := range h.Samples {
		if s.T <= at+1 {
			continue
		}
		after++
		if _, ok := s.Nodes[lost]; ok || len(s.Nodes) != 2 {
			t.Errorf("at %.1f s, after %s was lost: nodes %v, want the two others", s.T, lost, s.Nodes)
		}
	}
	if after == 0 {
		t.Errorf("no host sample after the new primary was named at %.1f s", at)
	}
}

// TestFailoverLossPostgres forces a loss: an asynchronous replica that
// stops receiving the primary's WAL 2.5 s into the run (its
// primary_conninfo pointed at nowhere), and is promoted when the primary
// is lost at 5 s. The orders the primary committed after the replica's
// last one are gone; the test counts them itself, from the old primary's
// own data once the run is over, and the audit must name as many.
func TestFailoverLossPostgres(t *testing.T) {
	t.Parallel()
	c, u := clusterTPROCC(t, server.Topology{Replicas: 1})
	nodes, err := c.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	replica := strings.Replace(nodes[1].URL, "/postgres?", "/tprocc?", 1)
	out := filepath.Join(t.TempDir(), "r.json")
	done := make(chan outcome, 1)
	go func() {
		done <- dbrig(t, "run", "tproc-c", "--target", u, "--mode", "sql", "--vus", "2", "--rampup", "1s", "--duration", "6s",
			"--failover-at", "5s", "--server-dir", c.Dir(), "--audit-durability", "--json", out)
	}()
	time.Sleep(2500 * time.Millisecond)
	paused := cutOff(t, replica)
	o := <-done
	if o.code != 1 {
		t.Errorf("exit %d, want 1: acknowledged New-Orders are missing", o.code)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	d := doc.Durability
	if d == nil {
		t.Fatal("no durability audit in the document")
	}
	old := districtOrders(t, startAlone(t, filepath.Join(c.Dir(), "node1")))
	doubt := inDoubt(t, out)
	want := int64(0)
	for k, o := range old {
		for id := paused[k] + 1; id <= o; id++ {
			if !doubt[fmt.Sprint(k, id)] {
				want++
			}
		}
	}
	t.Logf("the old primary committed %d New-Orders the replica never received (in doubt ones left out); the audit found %d of %d missing, %d in doubt",
		want, d.Missing, d.Acknowledged, d.InDoubt)
	if want == 0 {
		t.Fatal("the old primary committed nothing after the replica was cut off: the test lost nothing to find")
	}
	if d.Missing != want {
		t.Errorf("the audit counts %d acknowledged New-Orders missing, and the test lost %d", d.Missing, want)
	}
	wantIn(t, "stdout", o.stdout, human.Thousands(float64(want))+" missing")
}

// district is a district's key, as "W D".
type district = [2]int

// cutOff stops the replica at url receiving WAL, by pointing it at a
// port nothing listens on, and returns each district's last order it
// has once it has replayed all it received.
func cutOff(t *testing.T, url string) map[district]int {
	t.Helper()
	ctx, conn := context.Background(), connect(t, url)
	for _, sql := range []string{"ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=1 connect_timeout=1'", "SELECT pg_reload_conf()"} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		var receivers int
		var caughtUp bool
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_stat_wal_receiver),
			pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()`).Scan(&receivers, &caughtUp); err != nil {
			t.Fatal(err)
		}
		if receivers == 0 && caughtUp {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica still receives (%d receivers, caught up %v) 20 s after it was cut off", receivers, caughtUp)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return readDistricts(t, conn)
}

// startAlone starts the server a failover left behind in dir on its own,
// as a primary on a port of its own, once the run is over, and returns
// the URL of its tproc-c database; it is stopped when the test ends.
func startAlone(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := postgres.New(dir, "")
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s.URLFor("tprocc")
}

// districtOrders is each district's last order at url.
func districtOrders(t *testing.T, url string) map[district]int {
	t.Helper()
	return readDistricts(t, connect(t, url))
}

// connect is a connection to url, closed when the test ends.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func readDistricts(t *testing.T, conn *pgx.Conn) map[district]int {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT d_w_id, d_id, d_next_o_id - 1 FROM district")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[district]int{}
	for rows.Next() {
		var w, d, o int
		if err := rows.Scan(&w, &d, &o); err != nil {
			t.Fatal(err)
		}
		out[district{w, d}] = o
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// inDoubt reads the New-Orders the run's acknowledgement log (beside the
// document) says are in doubt, keyed as fmt.Sprint(district, o_id).
func inDoubt(t *testing.T, doc string) map[string]bool {
	t.Helper()
	f, err := os.Open(strings.TrimSuffix(doc, ".json") + ".acks")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var w, d, o int
		if _, err := fmt.Sscanf(sc.Text(), "? %d %d %d", &w, &d, &o); err == nil {
			out[fmt.Sprint(district{w, d}, o)] = true
		}
	}
	return out
}

// TestClusterRefusals: what cannot be asked of a cluster, or of a
// server that is not one, is one line and exit 2, before anything starts.
func TestClusterRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"replicas on mariadb", []string{"server", "start", "--kind", "mariadb", "--replicas", "2", "--dir", filepath.Join(dir, "m")}, "--replicas N makes a primary and its replicas, and a mariadb cluster's nodes all take writes: give --nodes N"},
		{"nodes on postgres", []string{"server", "start", "--kind", "postgres", "--nodes", "3", "--dir", filepath.Join(dir, "p")}, "--nodes N makes a multi-master cluster, which postgres has not: give --replicas N"},
		{"nodes with sync replicas", []string{"server", "start", "--kind", "mariadb", "--nodes", "3", "--sync-replicas", "1", "--dir", filepath.Join(dir, "n")}, "--sync-replicas is for a primary and its replicas"},
		{"nodes with replicas", []string{"server", "start", "--kind", "mariadb", "--nodes", "3", "--replicas", "1", "--dir", filepath.Join(dir, "r")}, "--nodes and --replicas are two shapes of cluster"},
		{"nodes with ha", []string{"server", "start", "--kind", "mariadb", "--nodes", "3", "--ha", "patroni", "--dir", filepath.Join(dir, "h")}, "--ha is for a primary and its replicas"},
		{"no nodes", []string{"server", "start", "--kind", "mariadb", "--nodes", "0", "--dir", filepath.Join(dir, "o")}, "--nodes 0: want 1 or more"},
		{"nodes on sqlite", []string{"server", "start", "--kind", "sqlite", "--nodes", "2", "--dir", filepath.Join(dir, "q")}, "sqlite"},
		{"replicas on sqlite", []string{"server", "start", "--kind", "sqlite", "--replicas", "2", "--dir", filepath.Join(dir, "s")}, "sqlite"},
		{"sync without replicas", []string{"server", "start", "--sync-replicas", "1", "--dir", filepath.Join(dir, "x")}, "give --replicas N"},
		{"too many sync", []string{"server", "start", "--replicas", "1", "--sync-replicas", "2", "--dir", filepath.Join(dir, "y")}, "want from 0 to the 1 replicas"},
		{"unknown ha", []string{"server", "start", "--replicas", "1", "--ha", "repmgr", "--dir", filepath.Join(dir, "z")}, "--ha repmgr"},
		{"failover without a server", []string{"run", "tproc-c", "--target", "sqlite:" + filepath.Join(dir, "a.db"), "--failover-at", "5s"}, "--failover-at needs a managed cluster"},
		{"failover past the end", []string{"run", "tproc-c", "--duration", "10s", "--rampup", "1s", "--failover-at", "20s", "--server-dir", dir}, "past the run's end"},
		{"failover on nothing", []string{"run", "tproc-c", "--failover-at", "5s", "--server-dir", dir}, "no dbrig"},
		{"failover on no cluster", []string{"server", "failover", "--dir", dir}, "no dbrig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantIn(t, "refusal", usageError(t, dbrig(t, tc.args...)), tc.want)
		})
	}
	for _, entry := range []string{"m", "s", "x", "y", "z", "p", "n", "r", "h", "o", "q"} {
		if _, err := os.Stat(filepath.Join(dir, entry)); err == nil {
			t.Errorf("a refused start made %s", filepath.Join(dir, entry))
		}
	}
}

// TestClusterWithoutPatroni: a cluster kept by Patroni, where Patroni and
// etcd cannot be found, is refused in one line that says how to install
// them, before anything is made.
func TestClusterWithoutPatroni(t *testing.T) {
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "c")
	cmd := exec.Command(bin, "server", "start", "--replicas", "2", "--ha", "patroni", "--dir", dir)
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	o := outcome{code: exitOf(t, cmd.Run()), stdout: stdout.String(), stderr: stderr.String()}
	wantIn(t, "refusal", usageError(t, o), "apt-get install patroni etcd-server")
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("a refused start made %s", dir)
	}
}
