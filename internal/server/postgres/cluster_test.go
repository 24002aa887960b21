//go:build unix

package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/servertest"
	"github.com/jackc/pgx/v5"
)

// newTestCluster makes and starts a cluster of topology t in a temporary
// directory, stopped when the test ends.
func newTestCluster(t *testing.T, topo server.Topology) (*Cluster, context.Context) {
	t.Helper()
	requireServerBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	c := NewCluster(t.TempDir(), "", topo)
	if err := c.Init(ctx); err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("Stop at cleanup: %v", err)
		}
	})
	if err := c.Start(ctx, nil); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return c, ctx
}

// roles is each node's role, and its sync state where it has one, as
// Nodes reports them: "node1=primary node2=replica/quorum".
func roles(t *testing.T, ctx context.Context, c *Cluster) string {
	t.Helper()
	nodes, err := c.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range nodes {
		r := n.Name + "=" + n.Role
		if n.Sync != "" {
			r += "/" + n.Sync
		}
		out = append(out, r)
	}
	return strings.Join(out, " ")
}

// exec runs sql on url.
func execOn(t *testing.T, ctx context.Context, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// awaitRows waits until the node at url has n rows in t, as a replica
// has once it replays them.
func awaitRows(t *testing.T, ctx context.Context, url string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// A replica that a quorum commit did not wait for may not have
		// replayed the table's creation yet: no table is no rows.
		got := "no table"
		if queryString(t, url, "SELECT (to_regclass('t') IS NOT NULL)::text") == "true" {
			got = queryString(t, url, "SELECT count(*)::text FROM t")
		}
		if got == fmt.Sprint(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %s rows of t after 30 s, want %d", url, got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestClusterWithoutHA(t *testing.T) {
	c, ctx := newTestCluster(t, server.Topology{Replicas: 2, SyncReplicas: 1})
	if got := roles(t, ctx, c); got != "node1=primary node2=replica/quorum node3=replica/quorum" {
		t.Fatalf("roles after start: %s", got)
	}
	st, err := c.Status(ctx)
	if err != nil || st.State != server.Running || len(st.Nodes) != 3 {
		t.Fatalf("status: %+v, %v", st, err)
	}
	if !strings.Contains(st.URL, "target_session_attrs=read-write") || strings.Count(st.URL, ",") != 2 {
		t.Errorf("the cluster's URL %s does not name every node for a read-write session", st.URL)
	}
	for _, f := range []string{"pgpass", replPassFile} {
		if fi, err := os.Stat(filepath.Join(c.dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, fi.Mode().Perm())
		}
	}
	if b, err := os.ReadFile(filepath.Join(c.nodes[1].DataDir(), "postgresql.auto.conf")); err != nil || strings.Contains(string(b), "password") {
		t.Errorf("a replica's primary_conninfo holds a password, or is unreadable (%v):\n%s", err, b)
	}
	// Each node is named by its cluster_name, as the telemetry asks it.
	for i, u := range st.Nodes {
		if got := queryString(t, u, "SHOW cluster_name"); got != nodeName(i) {
			t.Errorf("node %d's cluster_name is %q, want %s", i+1, got, nodeName(i))
		}
	}
	db := c.URLFor("postgres")
	execOn(t, ctx, db, "CREATE TABLE t (i int)")
	execOn(t, ctx, db, "INSERT INTO t VALUES (1)")
	awaitRows(t, ctx, st.Nodes[2], 1)

	n, err := c.Switchover(ctx, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatalf("Switchover: %v", err)
	}
	if n.Name == "node1" || n.Role != server.RolePrimary || n.Timeline != 2 {
		t.Fatalf("after a switchover the primary is %+v", n)
	}
	// The URL that follows the primary takes writes on the new one, and
	// the old primary replays them as a replica.
	execOn(t, ctx, db, "INSERT INTO t VALUES (2)")
	awaitRows(t, ctx, st.Nodes[0], 2)

	lost := n.Name
	n, err = c.Failover(ctx, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatalf("Failover: %v", err)
	}
	if n.Name == lost || n.Role != server.RolePrimary || n.Timeline != 3 {
		t.Fatalf("after a failover from %s the primary is %+v", lost, n)
	}
	nodes, _ := c.Nodes(ctx)
	for _, o := range nodes {
		if o.Name == lost && (o.Role != server.RoleDown || o.State != "lost") {
			t.Errorf("the node failed over from is %+v, want down and lost", o)
		}
	}
	execOn(t, ctx, db, "INSERT INTO t VALUES (3)")

	// Another process finds it as it is.
	servertest.AttachesRunning(t, c.dir, c)

	// A stopped cluster starts again with the lost node made anew.
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("pgrep", "-f", "postgres -D "+c.dir).Output(); len(out) > 0 {
		t.Fatalf("postmasters left after Stop: %s", out)
	}
	if err := c.Start(ctx, nil); err != nil {
		t.Fatalf("Start after the failover: %v", err)
	}
	if got := roles(t, ctx, c); strings.Count(got, "replica/quorum") != 2 {
		t.Fatalf("roles after the restart: %s", got)
	}
	s, _ := c.node(lost)
	awaitRows(t, ctx, s.urlAt("postgres", s.Port()), 3)
	if got := queryString(t, s.urlAt("postgres", s.Port()), "SHOW cluster_name"); got != lost {
		t.Errorf("%s, made anew, has cluster_name %q", lost, got)
	}
}

func TestClusterAsync(t *testing.T) {
	c, ctx := newTestCluster(t, server.Topology{Replicas: 1})
	if got := roles(t, ctx, c); got != "node1=primary node2=replica/async" {
		t.Fatalf("roles: %s", got)
	}
	if v := queryString(t, c.URLFor("postgres"), "SHOW synchronous_standby_names"); v != "" {
		t.Errorf("an asynchronous cluster has synchronous_standby_names %q", v)
	}
}

func TestTopologyRefused(t *testing.T) {
	for _, tc := range []struct {
		t    server.Topology
		want string
	}{
		{server.Topology{Replicas: 1, SyncReplicas: 2}, "--sync-replicas 2: want from 0 to the 1 replicas"},
		{server.Topology{SyncReplicas: 1}, "are for a cluster: give --replicas N"},
		{server.Topology{Replicas: 2, TTL: time.Second}, "give --ha too"},
		{server.Topology{Replicas: 2, HA: "repmgr"}, "--ha repmgr: a postgres cluster can be kept by"},
	} {
		_, err := server.NewCluster(Kind, t.TempDir(), "", tc.t)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.t, err, tc.want)
		}
	}
}

// requirePatroni skips the test without Patroni and etcd, unless
// DBRIG_REQUIRE_PATRONI=1 (CI installs them), when it fails.
func requirePatroni(t *testing.T) {
	t.Helper()
	if err := HABinaries(); err != nil {
		if os.Getenv("DBRIG_REQUIRE_PATRONI") == "1" {
			t.Fatalf("DBRIG_REQUIRE_PATRONI=1 but %v", err)
		}
		t.Skip(err)
	}
}

func TestClusterPatroni(t *testing.T) {
	requirePatroni(t)
	// A short lease, so that the failover takes seconds.
	c, ctx := newTestCluster(t, server.Topology{Replicas: 2, SyncReplicas: 1, HA: HAPatroni, TTL: 6 * time.Second, LoopWait: time.Second})
	if got := roles(t, ctx, c); !strings.HasPrefix(got, "node1=primary ") || strings.Count(got, "replica/sync") != 1 {
		t.Fatalf("roles after start: %s", got)
	}
	db := c.URLFor("postgres")
	execOn(t, ctx, db, "CREATE TABLE t (i int)")
	execOn(t, ctx, db, "INSERT INTO t VALUES (1)")

	began := time.Now()
	n, err := c.Failover(ctx, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatalf("Failover: %v", err)
	}
	if n.Name == "node1" || n.Role != server.RolePrimary {
		t.Fatalf("after the failover the primary is %+v", n)
	}
	// Patroni waits for the lost leader's lease to run out.
	if took := time.Since(began); took < 3*time.Second {
		t.Errorf("Patroni promoted %s %s after the loss, before the lease (6 s) could run out", n.Name, took)
	}
	execOn(t, ctx, db, "INSERT INTO t VALUES (2)")
	if got := queryString(t, db, "SELECT count(*)::text FROM t"); got != "2" {
		t.Errorf("the new primary has %s rows, want 2: the synchronous standby had the first", got)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{"patroni " + c.dir, "etcd --name dbrig --data-dir " + c.dir, "postgres -D " + c.dir} {
		if out, _ := exec.Command("pgrep", "-f", what).Output(); len(out) > 0 {
			t.Errorf("left running after Stop (%s): %s", what, out)
		}
	}
}
