//go:build unix

package pgtest

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/server/servertest"
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
		servertest.RequireWith(tb, "DBRIG_REQUIRE_PATRONI", postgres.HABinaries())
	}
	if t.ReplicaDelay > 0 {
		servertest.RequireWith(tb, "DBRIG_REQUIRE_NETNS", server.NetSupported())
	}
	c := postgres.NewCluster(tb.TempDir(), "", t)
	servertest.StartCluster(tb, "pgtest", c)
	return c
}
