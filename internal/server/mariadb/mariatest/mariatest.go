//go:build unix

// Package mariatest gives tests a real MariaDB server: one per test
// binary, started on first use, with a fresh database per test.
//
// A package using it must stop the server when its tests end:
//
//	func TestMain(m *testing.M) { mariatest.Main(m) }
//
// Without MariaDB binaries, tests that need the server are skipped,
// unless DBRIG_REQUIRE_MARIADB=1, when they fail: CI sets it so that a
// missing server cannot pass as a green run.
package mariatest

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server/mariadb"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

var h = servertest.New(servertest.Kind[*mariadb.Server]{
	Tag:     "mariatest",
	Require: "DBRIG_REQUIRE_MARIADB",
	BinEnv:  "MARIADB_BIN",
	FindBin: func() (string, error) { return mariadb.FindBinDir("") },
	New:     mariadb.New,
	// MariaDB's identifier limit.
	MaxName: 64,
})

// Main runs the package's tests, then stops the shared servers (this
// kind's and any other's the tests used) and removes their directories,
// even when the run is interrupted.
func Main(m *testing.M) { servertest.Main(m) }

// Start returns the shared server, starting it on first use.
func Start(tb testing.TB) *mariadb.Server { tb.Helper(); return h.Start(tb) }

// Bin is the directory of mariadbd; the test is skipped without it, or
// fails under DBRIG_REQUIRE_MARIADB=1.
func Bin(tb testing.TB) string { tb.Helper(); return h.Bin(tb) }

// NewServer initialises a server of the test's own in a temporary
// directory, for tests that restart it with settings of their own; it is
// stopped when the test ends.
func NewServer(tb testing.TB) *mariadb.Server { tb.Helper(); return h.NewServer(tb) }

// NewDB creates an empty database for this test and returns its URL; it
// is dropped when the test ends.
func NewDB(tb testing.TB) string { tb.Helper(); return h.NewDB(tb) }
