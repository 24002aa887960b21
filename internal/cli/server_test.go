package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/jackc/pgx/v5"
)

// serverBins skips a test on a machine without PostgreSQL, unless CI
// requires it, and returns the server's major version.
func serverBins(t *testing.T) int {
	t.Helper()
	bin, err := postgres.FindBinDir("")
	if err != nil {
		if os.Getenv("DBRIG_REQUIRE_PG") == "1" {
			t.Fatalf("DBRIG_REQUIRE_PG=1 but %v", err)
		}
		t.Skipf("%v (set PG_BIN, or DBRIG_REQUIRE_PG=1 to fail instead)", err)
	}
	v, err := postgres.ReadServerVersion(context.Background(), bin)
	if err != nil {
		t.Fatal(err)
	}
	return v.Major
}

// serverDir is a fresh server directory whose server is stopped when the
// test ends, whatever the test left running.
func serverDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		if s, err := server.AttachDir(dir); err == nil && s.Running() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := s.Stop(ctx); err != nil {
				t.Errorf("stopping the server at cleanup: %v", err)
			}
		}
	})
	return dir
}

// field returns the value printed after "label:" on a line of out.
func field(t *testing.T, out, label string) string {
	t.Helper()
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), label+":"); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatalf("no %q line in:\n%s", label, out)
	return ""
}

// TestServerCommands: start with a setting, status from a "new process"
// (nothing shared but the directory), stop, a restart that appends to the
// log, and a postmaster killed with SIGKILL reported as crashed.
func TestServerCommands(t *testing.T) {
	t.Parallel()
	serverBins(t)
	dir := serverDir(t)

	start := mustRun(t, "server", "start", "--dir", dir, "--set", "shared_buffers=64MB")
	o := start
	wantIn(t, "start output", o.stdout, "PostgreSQL ")
	wantIn(t, "start output", o.stdout, filepath.Join(dir, "server.log"))
	u := field(t, o.stdout, "URL")
	if got := pgValue[string](t, u, "SHOW shared_buffers"); got != "64MB" {
		t.Errorf("SHOW shared_buffers = %q, want 64MB", got)
	}

	o = mustRun(t, "server", "status", "--dir", dir)
	wantIn(t, "status", o.stdout, "running")
	wantIn(t, "status", o.stdout, "shared_buffers=64MB")
	// The URLs work through the cluster's password file, and print no
	// password.
	if _, pw := withPassword(t, u); strings.Contains(start.stdout+start.stderr+o.stdout+o.stderr, pw) {
		t.Errorf("server start or status printed the password:\n%s%s", start.stdout, o.stdout)
	}
	if got := field(t, o.stdout, "url"); got != u {
		t.Errorf("status url %q, start printed %q", got, u)
	}
	if got := pgValue[string](t, field(t, o.stdout, "url"), "SHOW shared_buffers"); got != "64MB" {
		t.Errorf("through status's URL, SHOW shared_buffers = %q, want 64MB", got)
	}

	line := usageError(t, dbrig(t, "server", "start", "--dir", dir))
	wantIn(t, "second start", line, "already running")

	o = mustRun(t, "server", "stop", "--dir", dir)
	wantIn(t, "stop", o.stdout, "Stopped")
	o = dbrig(t, "server", "status", "--dir", dir)
	if o.code != 1 {
		t.Errorf("status of a stopped server: exit %d, want 1", o.code)
	}
	wantIn(t, "status", o.stdout, "stopped")
	if _, err := pgx.Connect(context.Background(), u); err == nil {
		t.Error("connected after stop")
	}

	// The log of every start is kept.
	mustRun(t, "server", "start", "--dir", dir)
	log, err := os.ReadFile(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "database system is ready to accept connections"); n != 2 {
		t.Errorf("server.log holds %d starts, want 2 (appended, not truncated)", n)
	}

	pid := postmasterPID(t, dir)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitDeath(t, pid)
	o = dbrig(t, "server", "status", "--dir", dir)
	if o.code != 1 {
		t.Errorf("status of a killed server: exit %d, want 1", o.code)
	}
	wantIn(t, "status", o.stdout, "crashed")
	wantIn(t, "status", o.stdout, "pid "+strconv.Itoa(pid))
	wantIn(t, "status", o.stdout, "without a clean shutdown")

	// After a crash the same directory starts again, and a stop
	// acknowledges the crash.
	mustRun(t, "server", "start", "--dir", dir)
	mustRun(t, "server", "stop", "--dir", dir)
	o = dbrig(t, "server", "status", "--dir", dir)
	wantIn(t, "status after the crash was followed by a start and stop", o.stdout, "stopped")

	mustRun(t, "server", "start", "--dir", dir)
	if err := syscall.Kill(postmasterPID(t, dir), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o = mustRun(t, "server", "stop", "--dir", dir)
	wantIn(t, "stop of a crashed server", o.stdout, "crashed")
	o = dbrig(t, "server", "status", "--dir", dir)
	wantIn(t, "status after stop acknowledged the crash", o.stdout, "stopped")
}

// awaitDeath waits for a killed process to stop running: SIGKILL is
// delivered asynchronously, and what dbrig sees before then is a live
// server.
func awaitDeath(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return
		}
	}
	t.Fatalf("pid %d still running 10s after SIGKILL", pid)
}

func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(first)
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	return pid
}

// TestServerRejectedSettings: what the server or dbrig refuses ends the
// command at once with exit 2 and one line that says why, in the server's
// own words where the server refused.
func TestServerRejectedSettings(t *testing.T) {
	t.Parallel()
	major := serverBins(t)
	dir := serverDir(t)

	type rejected struct {
		name string
		args []string
		want string
	}
	cases := []rejected{
		{"no equals", []string{"--set", "shared_buffers"}, "want name=value"},
		{"no name", []string{"--set", "=1GB"}, "want name=value"},
		{"twice", []string{"--set", "work_mem=1MB", "--set", "WORK_MEM=2MB"}, "given twice"},
		{"owned by dbrig", []string{"--set", "port=5432"}, "managed by dbrig"},
		{"bad value", []string{"--set", "shared_buffers=lots"}, `invalid value for parameter "shared_buffers"`},
	}
	if major < 18 {
		cases = append(cases, rejected{"io_method before 18", []string{"--set", "io_method=worker"},
			`unrecognized configuration parameter "io_method"`})
	} else {
		cases = append(cases, rejected{"io_method bad value", []string{"--set", "io_method=notamethod"},
			`invalid value for parameter "io_method"`})
	}
	if hugePagesConfigured(t) {
		t.Log("this machine has huge pages: huge_pages=on would start, so it is not tested as a rejection")
	} else {
		cases = append(cases, rejected{"huge_pages without huge pages", []string{"--set", "huge_pages=on"},
			"did not start"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			line := usageError(t, dbrig(t, append([]string{"server", "start", "--dir", dir}, c.args...)...))
			wantIn(t, "error", line, c.want)
			if d := time.Since(began); d > 20*time.Second {
				t.Errorf("the failure took %v", d)
			}
		})
	}
	o := dbrig(t, "server", "status", "--dir", dir)
	if o.code != 1 {
		t.Errorf("status after failed starts: exit %d, want 1", o.code)
	}
	wantIn(t, "status", o.stdout, "stopped")

	wantIn(t, "error", usageError(t, dbrig(t, "server", "start")), "--dir is required")
	wantIn(t, "error", usageError(t, dbrig(t, "server", "status", "--dir", t.TempDir())), "no dbrig PostgreSQL server")
	wantIn(t, "error", usageError(t, dbrig(t, "server", "stop", "--dir", t.TempDir())), "no dbrig PostgreSQL server")
}

func hugePagesConfigured(t *testing.T) bool {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "HugePages_Total:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(rest))
			return n > 0
		}
	}
	return false
}

// TestServerConfined: --memory and --cpus are refused in one line when
// wrong, and otherwise show in start's and status's output until the
// stop removes the cgroup.
func TestServerConfined(t *testing.T) {
	serverBins(t)
	dir := serverDir(t)
	for _, c := range []struct{ flag, want string }{
		{"--memory=2 gigs", `--memory: want a size such as 512MB, 2GB or 1.5GiB, got "2 gigs"`},
		{"--cpus=4095", "--cpus: CPU 4095 is not online"},
		{"--cpus=0-", `--cpus: want a CPU list such as 0, 0-1 or 0,2, got "0-"`},
	} {
		wantIn(t, c.flag, usageError(t, dbrig(t, "server", "start", "--dir", dir, c.flag)), c.want)
	}
	noFile(t, filepath.Join(dir, "data"))
	needCgroups(t, dir, server.Confinement{Memory: 256 << 20, CPUs: "0"}, func() {
		wantIn(t, "a start where cgroups cannot be written", usageError(t, dbrig(t, "server", "start", "--dir", dir, "--memory", "256MB")), "cgroup")
	})
	out := mustRun(t, "server", "start", "--dir", dir, "--memory", "256MB", "--cpus", "0").stdout
	confined := field(t, out, "Confined")
	cgroup, ok := strings.CutSuffix(strings.TrimPrefix(confined, "memory 256MB, cpus 0 (cgroup "), ")")
	if !ok || !strings.Contains(cgroup, "/dbrig/") {
		t.Fatalf("Confined: %s, want memory 256MB, cpus 0 and the cgroup", confined)
	}
	if got := field(t, mustRun(t, "server", "status", "--dir", dir).stdout, "confined"); got != confined {
		t.Errorf("status says confined: %s, start said %s", got, confined)
	}
	mustRun(t, "server", "stop", "--dir", dir)
	noFile(t, cgroup)
}

// needCgroups skips the test where the cgroup c of a server in dir cannot
// be written, after calling refused (when not nil) to see a start refused;
// unless CI requires cgroups, which makes that a failure.
func needCgroups(t *testing.T, dir string, c server.Confinement, refused func()) {
	t.Helper()
	err := server.NewCgroup(dir, c).Check()
	if err == nil {
		return
	}
	if os.Getenv("DBRIG_REQUIRE_CGROUPS") == "1" {
		t.Fatalf("DBRIG_REQUIRE_CGROUPS=1 but %v", err)
	}
	if refused != nil {
		refused()
	}
	t.Skipf("%v (set DBRIG_REQUIRE_CGROUPS=1 to fail instead)", err)
}
