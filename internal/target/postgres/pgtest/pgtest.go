// Package pgtest gives tests a real PostgreSQL server: one per test binary,
// started on first use, with a fresh database per test, and a server of
// its own for a test that kills it.
//
// A package using it must stop the server when its tests end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without PostgreSQL binaries, tests that need the server are skipped,
// unless DBRIG_REQUIRE_PG=1, when they fail: CI sets it so that a missing
// server cannot pass as a green run.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/target/postgres"
)

var (
	mainCalled atomic.Bool

	once     sync.Once
	srv      *postgres.Server
	skipWhy  string
	startErr error

	dbSeq atomic.Int64
)

// Main runs the package's tests, then stops the shared server and removes
// its directory, even when the run is interrupted (which also stops the
// servers of NewServer).
func Main(m *testing.M) {
	mainCalled.Store(true)
	// The postmaster is detached from our process group, so ^C would
	// otherwise leave it running after the test binary is gone.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		shutdown()
		fmt.Fprintf(os.Stderr, "pgtest: %v: stopped the test server\n", sig)
		os.Exit(1)
	}()
	code := m.Run()
	signal.Stop(sigs)
	if err := shutdown(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

var shutdownOnce sync.Once

func shutdown() (err error) {
	shutdownOnce.Do(func() {
		own.Range(func(s, _ any) bool {
			stop(s.(*postgres.Server))
			return true
		})
		if srv != nil {
			err = stop(srv)
		}
	})
	return err
}

// stop stops s and removes its directory; after a failed stop the directory
// is kept: its log says why.
func stop(s *postgres.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		return fmt.Errorf("%w (server directory kept: %s)", err, s.Dir)
	}
	return os.RemoveAll(s.Dir)
}

// Start returns the shared server, starting it on first use.
func Start(tb testing.TB) *postgres.Server {
	tb.Helper()
	if !mainCalled.Load() {
		tb.Fatal("pgtest: add `func TestMain(m *testing.M) { pgtest.Main(m) }` to this package, so the shared server is stopped when the tests end")
	}
	once.Do(func() { srv, skipWhy, startErr = launch() })
	need(tb, skipWhy, startErr)
	return srv
}

// own holds the servers NewServer started, so that an interrupted run
// stops them too.
var own sync.Map

// NewServer starts a server for this test alone, stopped and removed when
// the test ends: for a test that kills or restarts it, which must not
// happen to the shared one.
func NewServer(tb testing.TB) *postgres.Server {
	tb.Helper()
	if !mainCalled.Load() {
		tb.Fatal("pgtest: add `func TestMain(m *testing.M) { pgtest.Main(m) }` to this package, so an interrupted run stops its servers")
	}
	s, why, err := launch()
	if s != nil {
		own.Store(s, nil)
		tb.Cleanup(func() {
			own.Delete(s)
			if err := stop(s); err != nil {
				tb.Errorf("pgtest: %v", err)
			}
		})
	}
	need(tb, why, err)
	return s
}

// need skips or fails the test when its server could not start: skipped
// on a machine without PostgreSQL, unless DBRIG_REQUIRE_PG=1.
func need(tb testing.TB, skipWhy string, err error) {
	tb.Helper()
	if skipWhy != "" {
		if os.Getenv("DBRIG_REQUIRE_PG") == "1" {
			tb.Fatalf("pgtest: DBRIG_REQUIRE_PG=1 but %s", skipWhy)
		}
		tb.Skipf("pgtest: %s (set PG_BIN, or DBRIG_REQUIRE_PG=1 to fail instead)", skipWhy)
	}
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
}

// launch initializes and starts a server in a new directory. skipWhy says
// why there is none on a machine without PostgreSQL binaries. A server
// that fails after its directory was made is returned with the error, so
// that the caller can clean up after it.
func launch() (s *postgres.Server, skipWhy string, err error) {
	bin, err := postgres.FindBinDir("")
	if err != nil {
		// A PG_BIN that points nowhere is a mistake to report, not a
		// machine without PostgreSQL.
		if os.Getenv("PG_BIN") != "" {
			return nil, "", err
		}
		return nil, err.Error(), nil
	}
	// A directory of our own rather than t.TempDir(): the shared server
	// outlives the first test that uses it, and a short path keeps the
	// socket in it.
	dir, err := os.MkdirTemp("", "dbrig-pg-")
	if err != nil {
		return nil, "", err
	}
	s = &postgres.Server{Dir: dir, BinDir: bin}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Init(ctx); err != nil {
		return s, "", err
	}
	return s, "", s.Start(ctx, nil)
}

// NewDB creates an empty database for this test and returns its URL. The
// database is dropped when the test ends, along with any sessions the test
// left connected to it.
func NewDB(tb testing.TB) string {
	tb.Helper()
	s := Start(tb)
	name := dbName(tb.Name(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.CreateDB(ctx, name); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DropDB(ctx, name); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.URLFor(name)
}

// dbName keeps the test's name in the database's, to tell leftovers apart,
// within PostgreSQL's 63-byte identifier limit; seq makes it unique.
func dbName(test string, seq int64) string {
	var b strings.Builder
	for _, r := range strings.ToLower(test) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	prefix := fmt.Sprintf("t%d_", seq)
	name := b.String()
	if room := 63 - len(prefix); len(name) > room {
		name = name[:room]
	}
	return prefix + name
}
