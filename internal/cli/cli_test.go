package cli_test

// End-to-end tests of the command line, in-process through cli.Main (and,
// for Ctrl-C, through the real binary), against real databases: the
// PostgreSQL server pgtest starts, and SQLite files.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/cli"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/server/servertest"
	"github.com/jackc/pgx/v5"
)

// outcome is what one dbrig command did.
type outcome struct {
	code           int
	stdout, stderr string
}

// dbrig runs one command line in-process, as cmd/dbrig does.
func dbrig(t *testing.T, args ...string) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(args, &stdout, &stderr)
	return logged(t, args, code, &stdout, &stderr)
}

// logged is a command line's outcome, logged.
func logged(t *testing.T, args []string, code int, stdout, stderr *bytes.Buffer) outcome {
	t.Helper()
	o := outcome{code: code, stdout: stdout.String(), stderr: stderr.String()}
	t.Logf("$ dbrig %s\nexit %d\n--- stdout:\n%s--- stderr:\n%s", strings.Join(args, " "), code, o.stdout, o.stderr)
	return o
}

// dbrigIn runs one command line as a process of its own, in dir, as a
// user would from there: for a test that would otherwise change the
// working directory of the test process, which the tests in parallel
// share.
func dbrigIn(t *testing.T, dir string, args ...string) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return logged(t, args, code, &stdout, &stderr)
}

// dbrigActing runs one command line in-process, as dbrig does, and calls
// act after from the run's first progress line, when its virtual users
// have begun: however long the command took to get there on a loaded
// host, act comes that far into the run. It returns when act began, zero
// when the command ended first and act was never called; an act begun is
// waited for.
func dbrigActing(t *testing.T, after time.Duration, act func(), args ...string) (outcome, time.Time) {
	t.Helper()
	var stdout bytes.Buffer
	w := &progressWatch{began: make(chan struct{})}
	acted, done := make(chan time.Time, 1), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-w.began:
		case <-done:
			return
		}
		select {
		case <-time.After(after):
		case <-done:
			return
		}
		acted <- time.Now()
		act()
	}()
	code := cli.Main(args, &stdout, w)
	close(done)
	wg.Wait()
	o := outcome{code: code, stdout: stdout.String(), stderr: w.String()}
	t.Logf("$ dbrig %s\nexit %d\n--- stdout:\n%s--- stderr:\n%s", strings.Join(args, " "), code, o.stdout, o.stderr)
	select {
	case at := <-acted:
		return o, at
	default:
		return o, time.Time{}
	}
}

// progressWatch is a command's stderr that closes began at its first
// progress line, of the ramp-up or the measured window.
type progressWatch struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	began chan struct{}
	seen  bool
}

func (w *progressWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(b)
	if !w.seen {
		for _, line := range strings.Split(w.buf.String(), "\n") {
			if strings.HasPrefix(line, "ramp-up ") || strings.HasPrefix(line, "measure ") {
				w.seen = true
				close(w.began)
				break
			}
		}
	}
	return n, err
}

func (w *progressWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// mustRun runs a command that has to succeed.
func mustRun(t *testing.T, args ...string) outcome {
	t.Helper()
	o := dbrig(t, args...)
	if o.code != 0 {
		t.Fatalf("dbrig %s: exit %d, stderr:\n%s", strings.Join(args, " "), o.code, o.stderr)
	}
	return o
}

// mustRunIn is dbrigIn for a command that must succeed.
func mustRunIn(t *testing.T, dir string, args ...string) outcome {
	t.Helper()
	o := dbrigIn(t, dir, args...)
	if o.code != 0 {
		t.Fatalf("dbrig %s: exit %d, stderr:\n%s", strings.Join(args, " "), o.code, o.stderr)
	}
	return o
}

// usageError asserts the contract for anything the user must fix: exit
// 2, exactly one line on stderr starting "dbrig: ", nothing on stdout. It
// returns that line.
func usageError(t *testing.T, o outcome) string {
	t.Helper()
	if o.code != 2 {
		t.Errorf("exit %d, want 2", o.code)
	}
	if o.stdout != "" {
		t.Errorf("stdout %q, want nothing", o.stdout)
	}
	line, rest, ok := strings.Cut(o.stderr, "\n")
	if !ok || rest != "" {
		t.Errorf("stderr %q, want exactly one line", o.stderr)
	}
	if !strings.HasPrefix(line, "dbrig: ") {
		t.Errorf("stderr %q does not start with \"dbrig: \"", line)
	}
	return line
}

func wantIn(t *testing.T, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%s %q does not mention %q", what, s, sub)
	}
}

// checkPasses runs `dbrig check` and wants every condition to pass or skip.
func checkPasses(t *testing.T, target string) {
	t.Helper()
	o := mustRun(t, "check", "tproc-c", "--target", target)
	pass := 0
	for line := range strings.Lines(o.stdout) {
		switch {
		case strings.HasPrefix(line, "PASS "):
			pass++
		case strings.HasPrefix(line, "FAIL "):
			t.Errorf("check: %s", strings.TrimSpace(line))
		}
	}
	if pass == 0 {
		t.Errorf("check printed no PASS line:\n%s", o.stdout)
	}
}

// readDoc reads a result document and checks what every completed or
// interrupted run must hold; the caller checks the window.
func readDoc(t *testing.T, path, kind, mode string) *result.Document {
	t.Helper()
	doc, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != result.SchemaVersion || doc.Workload != "tproc-c" || doc.Target.Kind != kind {
		t.Errorf("schema_version %d, workload %q, target kind %q; want %d, tproc-c, %s",
			doc.SchemaVersion, doc.Workload, doc.Target.Kind, result.SchemaVersion, kind)
	}
	nopm, _ := doc.Metric("nopm")
	tpm, _ := doc.Metric("tpm")
	if doc.PrimaryMetric != "nopm" || doc.PrimaryTx != "new_order" {
		t.Errorf("primary metric %q, transaction %q; want nopm, new_order", doc.PrimaryMetric, doc.PrimaryTx)
	}
	if got := doc.Config["mode"]; got != mode {
		t.Errorf("config.mode = %v, want %s", got, mode)
	}
	if nopm.Client == nil || *nopm.Client <= 0 {
		t.Fatalf("nopm client = %v, want > 0", nopm.Client)
	}
	wantNOPMAgreement(t, doc, nopm)
	// Only PostgreSQL keeps a transaction counter.
	if (tpm.DB != nil) != (kind == "postgres") {
		t.Errorf("tpm (database side) = %v on %s", tpm.DB, kind)
	}
	if len(doc.Transactions) != 5 {
		t.Fatalf("%d transaction types, want 5", len(doc.Transactions))
	}
	for _, tx := range doc.Transactions {
		if tx.Count <= 0 || tx.Histogram == "" {
			t.Errorf("transaction %s: count %d, histogram %q; want a count and a histogram", tx.Name, tx.Count, tx.Histogram)
		}
	}
	if len(doc.Series) == 0 {
		t.Error("no series")
	}
	return doc
}

// wantNOPMAgreement checks the database-side NOPM against the client's.
// They cannot agree exactly, and a fixed percentage is within sampling
// error of a short window; the difference has two sources, each bounded:
//
//   - A New-Order in flight at an edge of the window commits on one side of
//     the database's read and ends on the other side of the driver's edge:
//     at most one per VU per edge, so 2×VUs New-Orders.
//   - The database side counts commits between its reads of
//     sum(d_next_o_id) and divides by the time between the marks' stamps,
//     taken after the reads; the client counts and divides by the driver's
//     window. The start mark is read just before the window opens and the
//     end mark just after it closes, so each read is off its edge by at
//     most one mark's duration, at the client's rate. The end mark's
//     duration is in the document, as the difference between the two
//     windows; the start mark's is not, and is taken to be the same (the
//     same queries on the same connections) but at least 50 ms, a
//     scheduling delay on a busy machine.
//
// In New-Orders, |db - client| ≤ 2×VUs + rate × 2 × mark; as rates, that
// over the database's window, plus the client's rate scaled by the
// difference between the two windows.
func wantNOPMAgreement(t *testing.T, doc *result.Document, nopm result.Metric) {
	t.Helper()
	if nopm.DB == nil {
		t.Error("nopm (database side) missing")
		return
	}
	if len(doc.Marks) != 2 {
		t.Fatalf("%d marks, want 2", len(doc.Marks))
	}
	vus, _ := doc.Config["vus"].(float64)
	dbSeconds := doc.Marks[1].At - doc.Marks[0].At
	gap := math.Abs(dbSeconds - doc.WindowSeconds)
	mark := max(gap, 0.05)
	perSecond := *nopm.Client / 60
	tolerance := (2*vus+perSecond*2*mark)/(dbSeconds/60) + *nopm.Client*gap/dbSeconds
	diff := math.Abs(*nopm.DB - *nopm.Client)
	t.Logf("nopm %.1f (database) and %.1f (client) differ by %.1f (%.2f%%); the bound is %.1f (%d VUs, window %.3fs, marks %.3fs apart)",
		*nopm.DB, *nopm.Client, diff, diff / *nopm.DB * 100, tolerance, int(vus), doc.WindowSeconds, dbSeconds)
	if diff > tolerance {
		t.Errorf("nopm %.1f (database) and %.1f (client) differ by %.1f, more than the %.1f that the window's edges allow",
			*nopm.DB, *nopm.Client, diff, tolerance)
	}
}

// wantWindow wants the measured window within low..high, where high is
// stretched by the slowest transaction of the run: the window closes once
// the transactions in flight at its end have finished and been published
// (the driver's end edge), so one slow transaction there lengthens it by up
// to its own latency.
func wantWindow(t *testing.T, doc *result.Document, low, high float64, interrupted bool) {
	t.Helper()
	slowest := 0.0
	for _, tx := range doc.Transactions {
		slowest = max(slowest, tx.Latency.Max/1000)
	}
	if doc.WindowSeconds < low || doc.WindowSeconds > high+slowest {
		t.Errorf("window_seconds = %.2f, want %.1f..%.1f (%.1f, and the slowest transaction's %.2f s)", doc.WindowSeconds, low, high+slowest, high, slowest)
	}
	if doc.Interrupted != interrupted {
		t.Errorf("interrupted = %v, want %v", doc.Interrupted, interrupted)
	}
}

func noFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s exists (or cannot be checked: %v); a failed command must write nothing", path, err)
	}
}

// pgConn connects to the database at u, outside dbrig, for the test's
// duration.
func pgConn(t *testing.T, u string) (*pgx.Conn, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c, ctx
}

// pgExec runs sql on the database at u.
func pgExec(t *testing.T, u, sql string) {
	t.Helper()
	c, ctx := pgConn(t, u)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// pgValue reads the one value sql returns from the database at u.
func pgValue[T any](t *testing.T, u, sql string) T {
	t.Helper()
	c, ctx := pgConn(t, u)
	var v T
	if err := c.QueryRow(ctx, sql).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func pgInt(t *testing.T, u, sql string) int { return pgValue[int](t, u, sql) }

func pgTables(t *testing.T, u string) int {
	return pgInt(t, u, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
}

func TestPostgresCycle(t *testing.T) {
	t.Parallel()
	u := pgtest.NewDB(t)
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "2", "--loaders", "2")
	checkPasses(t, u)
	dir := t.TempDir()
	for _, mode := range []string{"procs", "sql"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(dir, mode+".json")
			o := mustRun(t, "run", "tproc-c", "--target", u, "--vus", "4", "--rampup", "1s", "--duration", "8s",
				"--mode", mode, "--json", path)
			wantIn(t, "stdout", o.stdout, "Result: "+path)
			doc := readDoc(t, path, "postgres", mode)
			wantWindow(t, doc, 7.5, 8.5, false)
			checkPasses(t, u)
		})
	}
	mustRun(t, "drop", "tproc-c", "--target", u)
	if n := pgTables(t, u); n != 0 {
		t.Errorf("%d tables left after drop", n)
	}
	wantIn(t, "check after drop", usageError(t, dbrig(t, "check", "tproc-c", "--target", u)), "dbrig build tproc-c")
}

func TestSQLiteCycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := "sqlite:" + dir + "/x.db"
	mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "2", "--loaders", "2")
	checkPasses(t, u)

	procs := filepath.Join(dir, "procs.json")
	msg := usageError(t, dbrig(t, "run", "tproc-c", "--target", u, "--duration", "1s", "--mode", "procs", "--json", procs))
	wantIn(t, "--mode procs on SQLite", msg, "--mode sql")
	noFile(t, procs)

	path := filepath.Join(dir, "sql.json")
	mustRun(t, "run", "tproc-c", "--target", u, "--vus", "4", "--rampup", "1s", "--duration", "8s",
		"--mode", "sql", "--json", path)
	doc := readDoc(t, path, "sqlite", "sql")
	wantWindow(t, doc, 7.5, 8.5, false)
	checkPasses(t, u)

	mustRun(t, "drop", "tproc-c", "--target", u)
	wantIn(t, "check after drop", usageError(t, dbrig(t, "check", "tproc-c", "--target", u)), "dbrig build tproc-c")
}

// TestBadInputs: each mistake gets one line and exit 2, and changes
// nothing: no result document, no tables.
func TestBadInputs(t *testing.T) {
	t.Parallel()
	u := pgtest.NewDB(t)
	out := filepath.Join(t.TempDir(), "r.json")
	const unreachable = "postgres://dbrig@127.0.0.1:1/x?connect_timeout=2"
	// Every case that gets as far as a target names one, so that none
	// falls back to the default SQLite file in the working directory.
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unreachable run", []string{"run", "tproc-c", "--target", unreachable, "--json", out}, "cannot connect"},
		{"unreachable build", []string{"build", "tproc-c", "--target", unreachable}, "cannot connect"},
		{"unknown target kind", []string{"run", "tproc-c", "--target", "oracle://x/y", "--json", out}, "oracle://x/y"},
		{"mariadb without a database", []string{"run", "tproc-c", "--target", "mariadb://bad", "--json", out}, "name one database"},
		{"mariadb without a host", []string{"build", "tproc-c", "--target", "mysql://u:pw@/x"}, "?socket="},
		{"mariadb bad port", []string{"run", "tproc-c", "--target", "mariadb://u@127.0.0.1:port/x", "--json", out}, "mariadb://u@127.0.0.1:port/x"},
		{"unreachable mariadb", []string{"run", "tproc-c", "--target", "mariadb://u@127.0.0.1:1/x", "--json", out}, "cannot connect"},
		{"mariadb socket missing", []string{"check", "tproc-c", "--target", "mariadb://u@/x?socket=/nonexistent/m.sock"}, "cannot connect"},
		{"zero warehouses", []string{"build", "tproc-c", "--target", u, "--warehouses", "0"}, "--warehouses"},
		{"zero loaders", []string{"build", "tproc-c", "--target", u, "--loaders", "0"}, "--loaders"},
		{"negative vus", []string{"run", "tproc-c", "--target", u, "--vus", "-1", "--json", out}, "--vus"},
		{"zero duration", []string{"run", "tproc-c", "--target", u, "--duration", "0s", "--json", out}, "--duration"},
		{"bad mode", []string{"run", "tproc-c", "--target", u, "--mode", "fast", "--json", out}, "--mode"},
		{"short lost-after", []string{"run", "tproc-c", "--target", u, "--lost-after", "100ms", "--json", out}, "--lost-after"},
		{"negative stall-after", []string{"run", "tproc-c", "--target", u, "--stall-after", "-1s", "--json", out}, "--stall-after"},
		{"zero lost-after", []string{"run", "tproc-c", "--target", u, "--lost-after", "0s", "--json", out}, "--lost-after must be at least 1s, got 0s"},
		{"zero stall-after", []string{"run", "tproc-c", "--target", u, "--stall-after", "0s", "--json", out}, "--stall-after must be at least 1s, got 0s"},
		{"non-number", []string{"run", "tproc-c", "--target", u, "--vus", "many", "--json", out}, "--vus"},
		{"unknown workload", []string{"run", "nosuch"}, `"nosuch"`},
		{"no workload", []string{"build"}, "tproc-c"},
		{"unknown flag", []string{"run", "tproc-c", "--target", u, "--nosuch"}, "--nosuch"},
		{"missing schema run", []string{"run", "tproc-c", "--target", u, "--json", out}, "dbrig build tproc-c --target " + u},
		{"missing schema check", []string{"check", "tproc-c", "--target", u}, "dbrig build tproc-c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantIn(t, "error", usageError(t, dbrig(t, c.args...)), c.want)
		})
	}
	noFile(t, out)
	if n := pgTables(t, u); n != 0 {
		t.Errorf("%d tables created by commands that failed", n)
	}
}

// TestMissingDirectorySQLite: an SQLite file in a directory that is not
// there is one line and exit 2, for a command that would make the file
// too, and creates nothing: a typing error in a path once made the
// directories, as root anywhere.
func TestMissingDirectorySQLite(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nonexistent")
	u := "sqlite:" + filepath.Join(missing, "dir", "x.db")
	for _, args := range [][]string{
		{"build", "tproc-c", "--target", u},
		{"run", "cpu", "--target", u, "--json", filepath.Join(t.TempDir(), "r.json")},
	} {
		msg := usageError(t, dbrig(t, args...))
		wantIn(t, args[0]+"'s error", msg, "no directory "+filepath.Join(missing, "dir"))
		noFile(t, missing)
	}
}

// TestPasswordNeverPrinted: a password in the target, in any of the forms
// PostgreSQL and MariaDB take, never reaches the output: refused by the server (a
// wrong one), or on the way to a server that is not there.
// TestRebuildAndLayout has the right one.
func TestPasswordNeverPrinted(t *testing.T) {
	t.Parallel()
	const pw = "s3cretpw"
	out := filepath.Join(t.TempDir(), "r.json")
	wrong, _ := withPassword(t, pgtest.NewDB(t))
	wrong = strings.Replace(wrong, ":"+url.PathEscape(passwordOf(t, wrong))+"@", ":"+pw+"@", 1)
	for _, u := range []string{
		wrong,
		"postgres://dbrig:" + pw + "@127.0.0.1:1/x?connect_timeout=2",
		"postgresql://dbrig:" + pw + "@127.0.0.1:1/x?connect_timeout=2",
		"postgres://dbrig@127.0.0.1:1/x?password=" + pw + "&connect_timeout=2",
		"host=127.0.0.1 port=1 user=dbrig password=" + pw + " dbname=x connect_timeout=2",
		"host=127.0.0.1 port=1 user=dbrig password='" + pw + "' dbname=x connect_timeout=2",
		// pgx cannot parse these; the error about them must not echo the password.
		"postgres://dbrig:" + pw + "@127.0.0.1:notaport/x",
		"host=127.0.0.1 port=notaport password=" + pw,
		// MariaDB's forms, reachable or not, parsable or not.
		"mariadb://dbrig:" + pw + "@127.0.0.1:1/x",
		"mysql://dbrig:" + pw + "@127.0.0.1:1/x?timeout=2s",
		"mariadb://dbrig:" + pw + "@/x?socket=/nonexistent/m.sock",
		"mariadb://dbrig:" + pw + "@127.0.0.1:notaport/x",
		"mariadb://dbrig:" + pw + "/x@127.0.0.1:1/x",
		"mariadb://dbrig:" + pw + "@127.0.0.1:1/x?timeout=soon",
	} {
		for _, cmd := range []string{"build", "run", "check", "drop"} {
			args := []string{cmd, "tproc-c", "--target", u}
			if cmd == "run" {
				args = append(args, "--json", out)
			}
			o := dbrig(t, args...)
			usageError(t, o)
			if strings.Contains(o.stdout+o.stderr, pw) {
				t.Errorf("dbrig %s --target %s printed the password:\n%s%s", cmd, u, o.stdout, o.stderr)
			}
		}
	}
	noFile(t, out)
}

// withPassword is u with the password of its passfile in its user part
// instead, and that password.
func withPassword(t *testing.T, u string) (string, string) {
	t.Helper()
	bare, pw := servertest.SplitPassfile(t, u)
	pu, err := url.Parse(bare)
	if err != nil {
		t.Fatal(err)
	}
	pu.User = url.UserPassword(pu.User.Username(), pw)
	return pu.String(), pw
}

// passwordOf is the password in u's user part.
func passwordOf(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := pu.User.Password()
	return pw
}

// TestRebuildAndLayout: an existing schema is kept unless --force, and a
// schema of another layout is refused with the way out. The target carries
// the server's password in the URL, which must never print.
func TestRebuildAndLayout(t *testing.T) {
	t.Parallel()
	plain := pgtest.NewDB(t)
	u, pw := withPassword(t, plain)
	var printed strings.Builder
	record := func(o outcome) outcome { printed.WriteString(o.stdout + o.stderr); return o }

	record(mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1", "--loaders", "2"))

	msg := usageError(t, record(dbrig(t, "build", "tproc-c", "--target", u, "--warehouses", "1", "--loaders", "2")))
	wantIn(t, "second build", msg, "--force")

	pgExec(t, plain, "UPDATE dbrig_tprocc SET layout = 999")
	out := filepath.Join(t.TempDir(), "r.json")
	msg = usageError(t, record(dbrig(t, "run", "tproc-c", "--target", u, "--duration", "1s", "--json", out)))
	wantIn(t, "run on another layout", msg, "--force")
	noFile(t, out)
	msg = usageError(t, record(dbrig(t, "check", "tproc-c", "--target", u)))
	wantIn(t, "check on another layout", msg, "--force")

	record(mustRun(t, "build", "tproc-c", "--target", u, "--warehouses", "1", "--loaders", "2", "--force"))
	if n := pgInt(t, plain, "SELECT layout FROM dbrig_tprocc"); n == 999 {
		t.Error("build --force kept the old schema")
	}
	record(mustRun(t, "check", "tproc-c", "--target", u))

	if strings.Contains(printed.String(), pw) {
		t.Errorf("the password was printed:\n%s", printed.String())
	}
}

// watch collects a process's output and tells when a string appears in it.
type watch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func newWatch(want string) *watch { return &watch{want: want, seen: make(chan struct{})} }

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// exitOf is the exit code in a finished process's error.
func exitOf(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("dbrig did not exit: %v", err)
	return -1
}

// testTags are the build tags the tests were built with, which the binary
// is built with too: the same dbrig as the commands run in-process (with
// make test's, SQLite's math functions are the C ones), and its packages
// found compiled.
func testTags() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				return s.Value
			}
		}
	}
	return ""
}

// binary is cmd/dbrig, built once for every test that needs it.
var binary struct {
	once sync.Once
	path string
	err  error
}

// buildBinary builds cmd/dbrig, for what only a real process can show; the
// tests share one build, which TestMain removes once they have run.
func buildBinary(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			binary.err = fmt.Errorf("no go tool to build dbrig with: %w", err)
			return
		}
		dir, err := os.MkdirTemp("", "dbrig-bin-")
		if err != nil {
			binary.err = err
			return
		}
		servertest.RemoveAtExit(dir)
		binary.path = filepath.Join(dir, "dbrig")
		if out, err := exec.Command(goTool, "build", "-tags", testTags(), "-o", binary.path, "github.com/dbrig/dbrig/cmd/dbrig").CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// TestInterrupt: Ctrl-C ends the window early, and the run still writes
// its result, marked interrupted, and exits with the interrupt code.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	u := sqliteTPROCC(t)

	path := filepath.Join(dir, "r.json")
	cmd := exec.Command(bin, "run", "tproc-c", "--target", u, "--duration", "60s", "--rampup", "1s", "--json", path)
	var stdout bytes.Buffer
	stderr := newWatch("Running ")
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	}()

	select {
	case <-stderr.seen:
	case err := <-exited:
		t.Fatalf("dbrig exited before running: %v\n%s", err, stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("dbrig did not start running within 15s:\n%s", stderr)
	}
	// 1s of ramp-up, then about 3s of window.
	time.Sleep(4 * time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	select {
	case err := <-exited:
		if code := exitOf(t, err); code != exitcode.Interrupted {
			t.Fatalf("dbrig exited %d after Ctrl-C, want %d\n%s", code, exitcode.Interrupted, stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("dbrig still running 15s after Ctrl-C:\n%s", stderr)
	}
	t.Logf("exited %.1fs after Ctrl-C\n--- stdout:\n%s--- stderr:\n%s", time.Since(signalled).Seconds(), &stdout, stderr)
	wantIn(t, "stdout", stdout.String(), "Result: "+path)
	doc := readDoc(t, path, "sqlite", "sql")
	wantWindow(t, doc, 1, 5, true)
}

// TestDefaultTarget: with no --target, a run builds the embedded SQLite
// database it needs and files its result under ./dbrig-results.
func TestDefaultTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := mustRunIn(t, dir, "run", "tproc-c", "--duration", "3s", "--rampup", "1s")
	wantIn(t, "stderr", strings.ToLower(o.stderr), "building")
	docs, err := filepath.Glob(filepath.Join(dir, "dbrig-results", "*.json"))
	if err != nil || len(docs) != 1 {
		t.Fatalf("result documents under dbrig-results: %v (%v), want one", docs, err)
	}
	wantIn(t, "stdout", o.stdout, "Result: "+filepath.Join("dbrig-results", filepath.Base(docs[0])))
	doc := readDoc(t, docs[0], "sqlite", "sql")
	wantWindow(t, doc, 2.5, 3.5, false)
	if _, err := os.Stat(filepath.Join(dir, "dbrig-data", "dbrig.db")); err != nil {
		t.Errorf("default database: %v", err)
	}
	checkPasses(t, "sqlite:"+filepath.Join(dir, "dbrig-data", "dbrig.db"))
}
