package mariadb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

func open(t testing.TB) dbtarget.Target {
	t.Helper()
	url := mariatest.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := dbtarget.OpenExisting(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func session(t testing.TB, tg dbtarget.Target) dbtarget.Session {
	t.Helper()
	s, err := tg.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func exec(t testing.TB, s dbtarget.Session, sql string, args ...any) {
	t.Helper()
	if _, err := s.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestClassify provokes each error class on the real server: a deadlock
// and a lock wait timeout are retried, a routine's SIGNAL SQLSTATE 'DR001'
// is the intended rollback, a killed session is lost, and a plain error
// is just that.
func TestClassify(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	want := func(what string, err error, class dbtarget.ErrClass) {
		t.Helper()
		if got := tg.Classify(err); got != class {
			t.Errorf("%s: %v classified %d, want %d", what, err, got, class)
		}
	}
	a, b := session(t, tg), session(t, tg)
	exec(t, a, "CREATE TABLE k (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
	exec(t, a, "INSERT INTO k VALUES (1, 0), (2, 0)")
	exec(t, a, "CREATE PROCEDURE rollback_me() BEGIN SIGNAL SQLSTATE 'DR001' SET MESSAGE_TEXT = 'intended'; END")

	_, err := a.Exec(ctx, "CALL rollback_me()")
	want("SIGNAL DR001", err, dbtarget.ErrUserRollback)
	_, err = a.Exec(ctx, "SELECT * FROM no_such_table")
	want("missing table", err, dbtarget.ErrOther)

	// A lock wait timeout: b waits a second for a's row lock.
	exec(t, a, "START TRANSACTION")
	exec(t, a, "UPDATE k SET v = 1 WHERE id = 1")
	exec(t, b, "SET SESSION innodb_lock_wait_timeout = 1")
	_, err = b.Exec(ctx, "UPDATE k SET v = 2 WHERE id = 1")
	want("lock wait timeout", err, dbtarget.ErrRetry)
	exec(t, a, "ROLLBACK")

	// A deadlock: each holds one row and wants the other's; InnoDB
	// chooses one of the two as its victim.
	exec(t, b, "SET SESSION innodb_lock_wait_timeout = 30")
	exec(t, a, "START TRANSACTION")
	exec(t, b, "START TRANSACTION")
	exec(t, a, "UPDATE k SET v = 1 WHERE id = 1")
	exec(t, b, "UPDATE k SET v = 1 WHERE id = 2")
	done := make(chan error, 1)
	go func() { _, err := a.Exec(ctx, "UPDATE k SET v = 1 WHERE id = 2"); done <- err }()
	time.Sleep(200 * time.Millisecond)
	_, err = b.Exec(ctx, "UPDATE k SET v = 1 WHERE id = 1")
	if errA := <-done; err == nil {
		err = errA
	}
	want("deadlock", err, dbtarget.ErrRetry)
	exec(t, a, "ROLLBACK")
	exec(t, b, "ROLLBACK")

	// A session killed from another is lost.
	var id int64
	if err := b.QueryRow(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	exec(t, a, fmt.Sprintf("KILL %d", id))
	_, err = b.Exec(ctx, "SELECT 1")
	want("killed session", err, dbtarget.ErrConnLost)
}

// TestCounters: Xacts counts commits and rollbacks, and Started is the
// same on every read within one life of the server.
func TestCounters(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	s := session(t, tg)
	exec(t, s, "CREATE TABLE c (id INT PRIMARY KEY)")
	before, ok, err := tg.Xacts(ctx)
	if err != nil || !ok {
		t.Fatalf("Xacts: %v %v", ok, err)
	}
	for i := range 5 {
		exec(t, s, "START TRANSACTION")
		exec(t, s, "INSERT INTO c VALUES ($1)", i)
		exec(t, s, "COMMIT")
	}
	exec(t, s, "START TRANSACTION")
	exec(t, s, "ROLLBACK")
	after, _, err := tg.Xacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Other tests' databases share the server's counter: at least ours.
	if after-before < 6 {
		t.Errorf("Xacts grew by %d over 5 commits and a rollback", after-before)
	}
	r, ok := tg.(dbtarget.Restartable)
	if !ok {
		t.Fatal("the target does not say when its server started")
	}
	first, err := r.Started(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		at, err := r.Started(ctx)
		if err != nil || !at.Equal(first) {
			t.Fatalf("Started %v then %v (%v): want one value per life", first, at, err)
		}
		time.Sleep(60 * time.Millisecond)
	}
	if time.Since(first) < 0 || time.Since(first) > time.Hour {
		t.Errorf("Started %v: not this server's start", first)
	}
	m := map[string]int64{}
	if mk, err := workload.MarkServer(ctx, tg, m, nil, nil); err != nil || m[workload.Xacts] == 0 || m[workload.ServerStarted] == 0 || mk.Server == "" {
		t.Errorf("MarkServer: %v on %q, %v", m, mk.Server, err)
	}
}

// rows is a RowSource of n rows that exercise every encoding LOAD DATA
// needs: tabs, newlines, backslashes, NULL, times and decimals.
type rows struct {
	i, n int
	at   time.Time
	vals []any
}

func (r *rows) Next() bool { r.i++; return r.i <= r.n }
func (r *rows) Values() ([]any, error) {
	var note any = fmt.Sprintf("row\t%d\nwith \\ and 'quotes' and \"more\"", r.i)
	if r.i%7 == 0 {
		note = nil
	}
	r.vals = append(r.vals[:0], r.i, float64(r.i)/100, note, r.at, r.i%2 == 0)
	return r.vals, nil
}
func (r *rows) Err() error { return nil }

// TestLoad: a bulk load lands every row exactly as given, across several
// LOAD DATA statements.
func TestLoad(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	s := session(t, tg)
	exec(t, s, "CREATE TABLE l (id INT PRIMARY KEY, amount DECIMAL(12,2), note VARCHAR(100), at DATETIME(6), flag BOOLEAN)")
	at := time.Date(2026, 11, 22, 8, 30, 15, 123456000, time.UTC)
	const n = 250_123
	got, err := s.Load(ctx, "l", []string{"id", "amount", "note", "at", "flag"}, &rows{n: n, at: at})
	if err != nil || got != n {
		t.Fatalf("loaded %d rows (%v), want %d", got, err, n)
	}
	var count, nulls int64
	var sum float64
	if err := s.QueryRow(ctx, "SELECT COUNT(*), SUM(amount), SUM(note IS NULL) FROM l").Scan(&count, &sum, &nulls); err != nil {
		t.Fatal(err)
	}
	if count != n || nulls != n/7 || sum != float64(n)*(n+1)/2/100 {
		t.Errorf("count %d, sum %.2f, nulls %d", count, sum, nulls)
	}
	var note, when string
	var flag bool
	if err := s.QueryRow(ctx, "SELECT note, CAST(at AS CHAR), flag FROM l WHERE id = 12").Scan(&note, &when, &flag); err != nil {
		t.Fatal(err)
	}
	if want := "row\t12\nwith \\ and 'quotes' and \"more\""; note != want || when != "2026-11-22 08:30:15.123456" || !flag {
		t.Errorf("row 12: %q %q %v; want %q, the time to the microsecond, true", note, when, flag, want)
	}
}

// TestTelemetry: the source reads the server's counters under the
// generic keys, sees a busy session, lists non-default settings and
// finds the server on this host.
func TestTelemetry(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	src, err := tg.(telemetry.Sourcer).Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := session(t, tg)
	exec(t, w, "CREATE TABLE written (id INT PRIMARY KEY)")
	exec(t, w, "INSERT INTO written VALUES (1)")
	c, err := src.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{telemetry.Commits, telemetry.Rollbacks, telemetry.LogicalReads, telemetry.PhysicalReads,
		telemetry.WALBytes, "mariadb.data_reads", "mariadb.data_writes", telemetry.DatabaseBytes} {
		if _, ok := c[key]; !ok {
			t.Errorf("counter %s missing from %v", key, c)
		}
	}
	if c[telemetry.LogicalReads] <= 0 || c[telemetry.WALBytes] <= 0 {
		t.Errorf("logical reads %v, WAL bytes %v: want the server's totals", c[telemetry.LogicalReads], c[telemetry.WALBytes])
	}
	busy := session(t, tg)
	go busy.Exec(context.Background(), "SELECT SLEEP(2)")
	// A connection whose statement has just returned can still show in
	// the process list for a moment, writing its result to the client
	// ("Writing to net"): a true sample, of time spent on the client. The
	// busy one is the session at work on anything else.
	var seen, working []telemetry.Session
	for deadline := time.Now().Add(5 * time.Second); len(working) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if seen, err = src.Sessions(ctx); err != nil {
			t.Fatal(err)
		}
		working = working[:0]
		for _, ss := range seen {
			if ss.Category != telemetry.WaitClient {
				working = append(working, ss)
			}
		}
	}
	if len(working) != 1 || working[0].Class == "" || working[0].Event == "" || working[0].Background {
		t.Errorf("sessions %+v: want the one sleeping, in the foreground", seen)
	}
	version, settings, err := src.Settings(ctx)
	if err != nil || !strings.Contains(version, "MariaDB") || settings["port"] == "" {
		t.Errorf("settings: %q, port %q, %v", version, settings["port"], err)
	}
	pid, dir, err := src.Local(ctx)
	if err != nil || pid <= 0 || dir == "" {
		t.Errorf("Local: %d %q %v; want the managed server's pid and data directory", pid, dir, err)
	}
	if _, err := src.Tables(ctx); err != nil {
		t.Error(err)
	}
}

// TestPrewarmAndSettle: after a load, settling leaves no dirty pages and
// the server's settings as they were, and a prewarm finds the table and
// its index resident.
func TestPrewarmAndSettle(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	s := session(t, tg)
	exec(t, s, "CREATE TABLE p (id INT PRIMARY KEY, amount DECIMAL(12,2), note VARCHAR(100), at DATETIME(6), flag BOOLEAN, KEY by_amount (amount))")
	if _, err := s.Load(ctx, "p", []string{"id", "amount", "note", "at", "flag"}, &rows{n: 100_000, at: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var pct, lwm string
	read := func(q string, dest ...any) {
		t.Helper()
		if err := s.QueryRow(ctx, q).Scan(dest...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	read("SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm", &pct, &lwm)
	var dirty int64
	read("SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'INNODB_BUFFER_POOL_PAGES_DIRTY'", &dirty)
	if dirty == 0 {
		t.Fatal("no dirty pages after a load: nothing to settle")
	}
	line, err := tg.(dbtarget.Settler).Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	read("SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'INNODB_BUFFER_POOL_PAGES_DIRTY'", &dirty)
	// Other tests' sessions may dirty a few pages meanwhile.
	if dirty > 100 || !strings.Contains(line, "dirty pages") {
		t.Errorf("after settling (%s): %d dirty pages", line, dirty)
	}
	var pct2, lwm2 string
	read("SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm", &pct2, &lwm2)
	if pct2 != pct || lwm2 != lwm {
		t.Errorf("settings after settling: %s, %s; want them restored to %s, %s", pct2, lwm2, pct, lwm)
	}

	r, err := tg.(dbtarget.Prewarmer).Prewarm(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Relations != 2 || r.Blocks < 100 || r.Fraction < 0.9 {
		t.Errorf("prewarm: %v; want both indexes of the table, nearly all resident", r)
	}
}
