//go:build unix

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

	"github.com/dbrig/dbrig/internal/server/postgres"
)

var (
	mainCalled atomic.Bool

	once     sync.Once
	srv      *postgres.Server
	dir      string
	skipWhy  string
	startErr error

	dbSeq atomic.Int64
)

// Main runs the package's tests, then stops the shared server and removes
// its directory, even when the run is interrupted.
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
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			err = srv.Stop(ctx)
		}
		if dir != "" {
			// After a failed stop the directory is kept: its log says why.
			if err == nil {
				os.RemoveAll(dir)
			} else {
				err = fmt.Errorf("%w (server directory kept: %s)", err, dir)
			}
		}
	})
	return err
}

// Start returns the shared server, starting it on first use.
func Start(tb testing.TB) *postgres.Server {
	tb.Helper()
	if !mainCalled.Load() {
		tb.Fatal("pgtest: add `func TestMain(m *testing.M) { pgtest.Main(m) }` to this package, so the shared server is stopped when the tests end")
	}
	once.Do(start)
	skipWithout(tb, skipWhy)
	if startErr != nil {
		tb.Fatalf("pgtest: %v", startErr)
	}
	return srv
}

// skipWithout skips the test for why, the reason there is no server,
// unless DBRIG_REQUIRE_PG=1 makes that a failure.
func skipWithout(tb testing.TB, why string) {
	tb.Helper()
	if why == "" {
		return
	}
	if os.Getenv("DBRIG_REQUIRE_PG") == "1" {
		tb.Fatalf("pgtest: DBRIG_REQUIRE_PG=1 but %s", why)
	}
	tb.Skipf("pgtest: %s (set PG_BIN, or DBRIG_REQUIRE_PG=1 to fail instead)", why)
}

// binDir finds the server binaries; why is set when there are none to
// find, err when PG_BIN points nowhere, a mistake to report rather than a
// machine without PostgreSQL.
func binDir() (bin, why string, err error) {
	bin, err = postgres.FindBinDir("")
	switch {
	case err == nil:
		return bin, "", nil
	case os.Getenv("PG_BIN") != "":
		return "", "", err
	}
	return "", err.Error(), nil
}

// NewServer initialises a server of the test's own in a temporary
// directory, for tests that restart it with settings of their own; it is
// stopped when the test ends.
func NewServer(tb testing.TB) *postgres.Server {
	tb.Helper()
	bin, why, err := binDir()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	skipWithout(tb, why)
	return NewServerFrom(tb, bin)
}

// NewServerFrom is NewServer with the binaries in bin, for tests of
// another version than the one the other tests use.
func NewServerFrom(tb testing.TB, bin string) *postgres.Server {
	tb.Helper()
	s := &postgres.Server{Dir: tb.TempDir(), BinDir: bin}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Init(ctx); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			tb.Errorf("pgtest: stopping the server: %v", err)
		}
	})
	return s
}

func start() {
	bin, why, err := binDir()
	if bin == "" {
		skipWhy, startErr = why, err
		return
	}
	// A directory of our own rather than t.TempDir(): the server outlives
	// the first test that uses it, and a short path keeps the socket in it.
	dir, err = os.MkdirTemp("", "dbrig-pg-")
	if err != nil {
		startErr = err
		return
	}
	s := &postgres.Server{Dir: dir, BinDir: bin}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Init(ctx); err != nil {
		startErr = err
		return
	}
	if err := s.Start(ctx, nil); err != nil {
		startErr = err
		return
	}
	srv = s
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
