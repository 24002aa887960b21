//go:build unix

// Package servertest is what every kind's test-server package shares (see
// internal/server/postgres/pgtest): one real server per test binary,
// started on first use, stopped and removed when the tests end even on an
// interrupt, a fresh database per test, and servers of a test's own. A
// kind supplies how to find its binaries and make a server; nothing here
// knows a database.
package servertest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
)

// Server is a managed server that can also drop a database.
type Server interface {
	server.Server
	DropDB(ctx context.Context, name string) error
}

// Kind is how one kind's test servers are found and made.
type Kind[S Server] struct {
	// Tag prefixes messages: the test package's name ("pgtest").
	Tag string
	// Require names the variable that, set to 1, makes a missing server a
	// failure instead of a skip ("DBRIG_REQUIRE_PG"); CI sets it.
	Require string
	// BinEnv names the variable that points at the binaries ("PG_BIN"):
	// when it is set, binaries not found there are a mistake to report.
	BinEnv string
	// FindBin finds the binaries' directory.
	FindBin func() (string, error)
	// New makes a server in dir from the binaries in bin.
	New func(dir, bin string) S
	// MaxName is the longest database name the server takes.
	MaxName int
}

// Harness is a kind's shared test server.
type Harness[S Server] struct {
	kind     Kind[S]
	once     sync.Once
	srv      S
	started  bool
	dir      string
	skipWhy  string
	startErr error
	dbSeq    atomic.Int64
	stopOnce sync.Once
}

var (
	mainCalled atomic.Bool
	// harnesses are every kind's in this test binary, which Main stops.
	harnesses []interface{ shutdown() error }
)

// New is the harness for kind; nothing starts until a test asks. Call it
// from a package variable's initialiser, before Main runs.
func New[S Server](kind Kind[S]) *Harness[S] {
	h := &Harness[S]{kind: kind}
	harnesses = append(harnesses, h)
	return h
}

// Main runs the package's tests, then stops every kind's shared server
// and removes its directory, even when the run is interrupted: one
// TestMain serves a package whose tests use several kinds.
func Main(m *testing.M) {
	mainCalled.Store(true)
	// The servers are detached from our process group, so ^C would
	// otherwise leave them running after the test binary is gone.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		shutdownAll()
		fmt.Fprintf(os.Stderr, "servertest: %v: stopped the test servers\n", sig)
		os.Exit(1)
	}()
	code := m.Run()
	signal.Stop(sigs)
	if err := shutdownAll(); err != nil {
		fmt.Fprintln(os.Stderr, "servertest:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// leftovers are what Main removes once the tests have run.
var leftovers struct {
	sync.Mutex
	paths []string
}

// RemoveAtExit has Main remove path, once every test of the package has
// run: for what several tests share, which no one test's cleanup may take.
func RemoveAtExit(path string) {
	leftovers.Lock()
	defer leftovers.Unlock()
	leftovers.paths = append(leftovers.paths, path)
}

func shutdownAll() error {
	leftovers.Lock()
	for _, p := range leftovers.paths {
		os.RemoveAll(p)
	}
	leftovers.Unlock()
	var errs []error
	for _, h := range harnesses {
		errs = append(errs, h.shutdown())
	}
	return errors.Join(errs...)
}

func (h *Harness[S]) shutdown() (err error) {
	h.stopOnce.Do(func() {
		if h.started {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			if err = h.srv.Stop(ctx); err != nil {
				err = fmt.Errorf("%s: %w", h.kind.Tag, err)
			}
		}
		if h.dir != "" {
			// After a failed stop the directory is kept: its log says why.
			if err == nil {
				os.RemoveAll(h.dir)
			} else {
				err = fmt.Errorf("%w (server directory kept: %s)", err, h.dir)
			}
		}
	})
	return err
}

// Start returns the shared server, starting it on first use.
func (h *Harness[S]) Start(tb testing.TB) S {
	tb.Helper()
	if !mainCalled.Load() {
		tb.Fatalf("%s: add `func TestMain(m *testing.M) { %s.Main(m) }` to this package, so the shared server is stopped when the tests end", h.kind.Tag, h.kind.Tag)
	}
	h.once.Do(h.start)
	h.skipWithout(tb, h.skipWhy)
	if h.startErr != nil {
		tb.Fatalf("%s: %v", h.kind.Tag, h.startErr)
	}
	return h.srv
}

// skipWithout skips the test for why, the reason there is no server,
// unless the kind's Require variable makes that a failure.
func (h *Harness[S]) skipWithout(tb testing.TB, why string) {
	tb.Helper()
	if why == "" {
		return
	}
	if os.Getenv(h.kind.Require) == "1" {
		tb.Fatalf("%s: %s=1 but %s", h.kind.Tag, h.kind.Require, why)
	}
	tb.Skipf("%s: %s (set %s, or %s=1 to fail instead)", h.kind.Tag, why, h.kind.BinEnv, h.kind.Require)
}

// binDir finds the server binaries; why is set when there are none to
// find, err when BinEnv points nowhere, a mistake to report rather than a
// machine without the server.
func (h *Harness[S]) binDir() (bin, why string, err error) {
	bin, err = h.kind.FindBin()
	switch {
	case err == nil:
		return bin, "", nil
	case os.Getenv(h.kind.BinEnv) != "":
		return "", "", err
	}
	return "", err.Error(), nil
}

// Bin is the directory of the server's binaries, for tests that start a
// server through dbrig's command line; without them the test is skipped,
// or fails when the kind's Require variable is set.
func (h *Harness[S]) Bin(tb testing.TB) string {
	tb.Helper()
	bin, why, err := h.binDir()
	if err != nil {
		tb.Fatalf("%s: %v", h.kind.Tag, err)
	}
	h.skipWithout(tb, why)
	return bin
}

// NewServer initialises a server of the test's own in a temporary
// directory, for tests that restart it with settings of their own; it is
// stopped when the test ends.
func (h *Harness[S]) NewServer(tb testing.TB) S {
	tb.Helper()
	return h.NewServerFrom(tb, h.Bin(tb))
}

// NewServerFrom is NewServer with the binaries in bin, for tests of
// another version than the one the other tests use.
func (h *Harness[S]) NewServerFrom(tb testing.TB, bin string) S {
	tb.Helper()
	s := h.kind.New(tb.TempDir(), bin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Init(ctx); err != nil {
		tb.Fatalf("%s: %v", h.kind.Tag, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			tb.Errorf("%s: stopping the server: %v", h.kind.Tag, err)
		}
	})
	return s
}

func (h *Harness[S]) start() {
	bin, why, err := h.binDir()
	if bin == "" {
		h.skipWhy, h.startErr = why, err
		return
	}
	// A directory of our own rather than t.TempDir(): the server outlives
	// the first test that uses it, and a short path keeps the socket in it.
	h.dir, err = os.MkdirTemp("", "dbrig-"+h.kind.Tag+"-")
	if err != nil {
		h.startErr = err
		return
	}
	s := h.kind.New(h.dir, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Init(ctx); err != nil {
		h.startErr = err
		return
	}
	if err := s.Start(ctx, nil); err != nil {
		h.startErr = err
		return
	}
	h.srv, h.started = s, true
}

// NewDB creates an empty database for this test and returns its URL. The
// database is dropped when the test ends, along with any sessions the test
// left connected to it.
func (h *Harness[S]) NewDB(tb testing.TB) string {
	tb.Helper()
	return h.NewDBWith(tb, func(ctx context.Context, s S, name string) error { return s.CreateDB(ctx, name) })
}

// NewDBWith is NewDB with the database made by create, for a kind that
// can make one already filled (a copy of a template).
func (h *Harness[S]) NewDBWith(tb testing.TB, create func(ctx context.Context, s S, name string) error) string {
	tb.Helper()
	s := h.Start(tb)
	name := DBName(tb.Name(), h.dbSeq.Add(1), h.kind.MaxName)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := create(ctx, s, name); err != nil {
		tb.Fatalf("%s: create database %s: %v", h.kind.Tag, name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DropDB(ctx, name); err != nil {
			tb.Errorf("%s: drop database %s: %v", h.kind.Tag, name, err)
		}
	})
	return s.URLFor(name)
}

// DBName keeps the test's name in the database's, to tell leftovers
// apart, within max bytes; seq makes it unique.
func DBName(test string, seq int64, max int) string {
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
	if room := max - len(prefix); len(name) > room {
		name = name[:room]
	}
	return prefix + name
}

// RequireCgroups skips where this process may not create cgroups for c,
// unless DBRIG_REQUIRE_CGROUPS=1 (CI runs as root on a host that has them).
func RequireCgroups(t *testing.T, c server.Confinement) {
	t.Helper()
	RequireWith(t, "DBRIG_REQUIRE_CGROUPS", server.NewCgroup(t.TempDir(), c).Check())
}

// RequireWith skips the test for err, why this host cannot run it,
// unless the variable require is set to 1, when it fails: CI sets it, so
// that what it installed cannot pass missing as a green run.
func RequireWith(tb testing.TB, require string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv(require) == "1" {
		tb.Fatalf("%s=1 but %v", require, err)
	}
	tb.Skipf("%v (or %s=1 to fail instead)", err, require)
}

// SplitPassfile is a managed server's URL u without its passfile
// parameter, and the password that file holds: the last field of its first
// line, which is the whole line in a MariaDB server's file and the last of
// libpq's host:port:db:user:password.
func SplitPassfile(tb testing.TB, u string) (bare, password string) {
	tb.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		tb.Fatal(err)
	}
	q := pu.Query()
	b, err := os.ReadFile(q.Get("passfile"))
	if err != nil {
		tb.Fatalf("the server's password file: %v", err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	q.Del("passfile")
	pu.RawQuery = q.Encode()
	return pu.String(), line[strings.LastIndex(line, ":")+1:]
}
