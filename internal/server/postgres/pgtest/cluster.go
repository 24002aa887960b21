//go:build unix

package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/postgres"
)

// NewCluster starts a cluster of topology t of the test's own in a
// temporary directory, stopped when the test ends. Without PostgreSQL it
// skips the test as the shared server's tests are skipped; a topology
// with an HA manager skips it without Patroni and etcd unless
// DBRIG_REQUIRE_PATRONI=1, and one with a replica delay without network
// namespaces (root) unless DBRIG_REQUIRE_NETNS=1: CI sets both, so that a
// missing one fails instead.
func NewCluster(tb testing.TB, t server.Topology) *postgres.Cluster {
	tb.Helper()
	h.Bin(tb)
	if t.HA != "" {
		requireWith(tb, "DBRIG_REQUIRE_PATRONI", postgres.HABinaries())
	}
	if t.ReplicaDelay > 0 {
		requireWith(tb, "DBRIG_REQUIRE_NETNS", server.NetSupported())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := postgres.NewCluster(tb.TempDir(), "", t)
	if err := c.Init(ctx); err != nil {
		tb.Fatalf("pgtest: a cluster of %s: %v", t, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			tb.Errorf("pgtest: stopping the cluster: %v", err)
		}
	})
	if err := c.Start(ctx, nil); err != nil {
		tb.Fatalf("pgtest: starting a cluster of %s: %v", t, err)
	}
	return c
}

// requireWith skips the test for err, unless the variable require is
// set to 1, when it fails.
func requireWith(tb testing.TB, require string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv(require) == "1" {
		tb.Fatalf("pgtest: %s=1 but %v", require, err)
	}
	tb.Skipf("pgtest: %v (or %s=1 to fail instead)", err, require)
}
