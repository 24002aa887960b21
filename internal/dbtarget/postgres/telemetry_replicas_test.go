//go:build unix

package postgres

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
	pgpostgres "github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

// TestReplicasAcrossAFailover: through a cluster's multi-host URL the
// source reads the primary's standbys (a quorum of one of two, so both
// hold commits), where each stood in the primary's WAL and how long it
// lagged; after a failover it reads the new primary's, the one standby
// left. It names the cluster's nodes, each reached on its own, with its
// postmaster on this host; the node lost is not among them after. A
// server without standbys has none, and is no node of several.
func TestReplicasAcrossAFailover(t *testing.T) {
	alone := openSource(t, pgtest.NewDB(t))
	if rs, err := alone.Replicas(context.Background()); err != nil || len(rs) != 0 {
		t.Errorf("a server without standbys: %+v, %v; want none", rs, err)
	}
	if ns, err := alone.Nodes(context.Background()); err != nil || len(ns) != 0 {
		t.Errorf("a server of its own has nodes %+v, %v; want none", ns, err)
	}
	c := pgtest.NewCluster(t, server.Topology{Replicas: 2, SyncReplicas: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src := openSource(t, c.URLFor("postgres"))
	// A commit, so that the primary measures each standby's lags. The
	// primary forgets them once a standby has reported itself caught up
	// twice running, which on a busy host can come before the read, so a
	// few commits are tried, each read at once.
	var rs []telemetry.Replica
	for try := 0; try < 5; try++ {
		if err := src.stats.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (i int); INSERT INTO t SELECT generate_series(1, 1000)")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var err error
		if rs, err = src.Replicas(ctx); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(rs, func(r telemetry.Replica) bool { return r.FlushLag == nil }) {
			break
		}
	}
	if names := replicaNames(rs); !slices.Equal(names, []string{"node2", "node3"}) {
		t.Fatalf("replicas %v, want node2 and node3", names)
	}
	for _, r := range rs {
		behind, ok := r.Behind()
		if r.State != "streaming" || r.SyncState != "quorum" || !r.Synchronous || r.Sent == 0 || r.Flushed == 0 ||
			r.Flushed > r.Sent || !ok || behind > 1<<20 || r.FlushLag == nil || *r.FlushLag <= 0 {
			t.Errorf("%s: %+v, want a synchronous standby streaming close behind, with its lags", r.Name, r.ReplicaSample)
		}
	}
	nodes := nodePIDs(t, c)
	if ns, err := src.Nodes(ctx); err != nil || !reflect.DeepEqual(ns, nodes) {
		t.Errorf("nodes %+v, %v; want %+v", ns, err, nodes)
	}
	primary, err := c.Failover(ctx, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	// The standby left streams again once it is pointed at the new
	// primary.
	for {
		rs, err = src.Replicas(ctx)
		if err == nil && len(rs) > 0 || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if names := replicaNames(rs); err != nil || len(names) != 1 || names[0] == primary.Name {
		t.Errorf("after the failover to %s: replicas %v, %v; want the other standby", primary.Name, names, err)
	}
	if ns, err := src.Nodes(ctx); err != nil || !reflect.DeepEqual(ns, nodes[1:]) {
		t.Errorf("after node1 was lost: nodes %+v, %v; want %+v", ns, err, nodes[1:])
	}
}

// nodePIDs are the cluster's nodes with their postmasters, as each
// node's postmaster.pid names it.
func nodePIDs(t *testing.T, c *pgpostgres.Cluster) []telemetry.Node {
	t.Helper()
	var out []telemetry.Node
	for _, name := range []string{"node1", "node2", "node3"} {
		b, err := os.ReadFile(filepath.Join(c.Dir(), name, "data", "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, telemetry.Node{Name: name, PID: pid})
	}
	return out
}

func replicaNames(rs []telemetry.Replica) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}
