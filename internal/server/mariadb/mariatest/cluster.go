//go:build unix

package mariatest

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/mariadb"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// NewCluster starts a Galera cluster of nodes nodes of the test's own in
// a temporary directory, stopped when the test ends. Without MariaDB, or
// without what Galera needs (mariadb.ClusterTools), the test is skipped
// as the shared server's tests are, unless DBRIG_REQUIRE_MARIADB=1, when
// it fails: CI installs Galera too.
func NewCluster(tb testing.TB, nodes int) *mariadb.Cluster {
	tb.Helper()
	RequireCluster(tb)
	c := mariadb.NewCluster(tb.TempDir(), "", server.Topology{Nodes: nodes})
	servertest.StartCluster(tb, "mariatest", c)
	return c
}

// RequireCluster skips the test where this host cannot run a Galera
// cluster's nodes (no MariaDB, or not what mariadb.ClusterTools names),
// for tests that start one through dbrig's command line; under
// DBRIG_REQUIRE_MARIADB=1 it fails the test instead.
func RequireCluster(tb testing.TB) {
	tb.Helper()
	h.Bin(tb)
	servertest.RequireWith(tb, "DBRIG_REQUIRE_MARIADB", mariadb.ClusterTools())
}
