package mariadb_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	_ "github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// TestLifecycle: a server of its own, created, started with a setting that
// took, reached by TCP and by its socket, seen by another process, and
// stopped; the password never shows in what dbrig prints, and the URLs
// name the file that holds it.
func TestLifecycle(t *testing.T) {
	s := mariatest.NewServer(t)
	srv := s
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := s.Start(ctx, map[string]string{"innodb_buffer_pool_size": "64M", "innodb-io-capacity": "300"}); err != nil {
		t.Fatal(err)
	}
	if srv.ReadsDirect(ctx, map[string]string{"innodb-flush-method": "fsync"}) || !srv.ReadsDirect(ctx, map[string]string{"innodb_flush_method": "O_DIRECT"}) {
		t.Error("ReadsDirect does not follow innodb_flush_method")
	}
	secret, err := os.ReadFile(s.Dir + "/dbrig-secret")
	if err != nil {
		t.Fatal(err)
	}
	pw := strings.TrimSpace(string(secret))
	if fi, _ := os.Stat(s.Dir + "/dbrig-secret"); fi.Mode().Perm() != 0o600 {
		t.Errorf("dbrig-secret mode %04o, want 0600", fi.Mode().Perm())
	}
	if err := s.CreateDB(ctx, "life"); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{s.URLFor("life"), s.SocketURLFor("life")} {
		tg, err := dbtarget.OpenExisting(ctx, url)
		if err != nil {
			t.Fatalf("open %s: %v", dbtarget.Redact(url), err)
		}
		if strings.Contains(tg.URL(), pw) {
			t.Errorf("target URL %s shows the password", tg.URL())
		}
		s, err := tg.Session(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pool, io int64
		if err := s.QueryRow(ctx, "SELECT @@innodb_buffer_pool_size, @@innodb_io_capacity").Scan(&pool, &io); err != nil {
			t.Fatal(err)
		}
		if pool != 64<<20 || io != 300 {
			t.Errorf("innodb_buffer_pool_size %d, innodb_io_capacity %d; want 64M and 300", pool, io)
		}
		var bind, method string
		if err := s.QueryRow(ctx, "SELECT @@bind_address").Scan(&bind); err != nil || bind != "127.0.0.1" {
			t.Errorf("bind_address %q (%v), want 127.0.0.1 alone", bind, err)
		}
		// Started without innodb_flush_method: the server's own default
		// says whether its data reads bypass the page cache.
		if err := s.QueryRow(ctx, "SELECT @@innodb_flush_method").Scan(&method); err != nil {
			t.Fatal(err)
		}
		if want := strings.HasPrefix(method, "O_DIRECT") || method == "ALL_O_DIRECT"; srv.ReadsDirect(ctx, nil) != want {
			t.Errorf("ReadsDirect with the default %s: %v, want %v", method, !want, want)
		}
		s.Close()
		tg.Close()
	}
	other, err := server.AttachDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := other.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != server.Running || st.PID == 0 || !strings.HasPrefix(st.Version, "MariaDB ") {
		t.Errorf("status %+v: want running with a pid and a version", st)
	}
	if strings.Contains(st.URL+st.Socket, pw) || !strings.Contains(st.URL, "passfile=") || !strings.Contains(st.Socket, "passfile=") {
		t.Errorf("status URLs %q %q: want a passfile, and no password", st.URL, st.Socket)
	}
	if err := other.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Status(ctx); err != nil || st.State != server.Stopped {
		t.Errorf("after stop: %v %v", st.State, err)
	}
}

// TestRejectedSetting: a value the server refuses stops the start with
// the server's own words, in one line, as a UserError; a name dbrig owns
// is refused before anything starts; a typo is caught without starting.
func TestRejectedSetting(t *testing.T) {
	s := mariatest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var ue *exitcode.UserError
	err := s.Start(ctx, map[string]string{"innodb_flush_method": "bogus"})
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "bogus") || strings.Contains(err.Error(), "\n") {
		t.Errorf("start with innodb_flush_method=bogus: %v; want one line in the server's words", err)
	}
	if s.Running() {
		t.Error("running after a failed start")
	}
	if err := s.Start(ctx, map[string]string{"bind-address": "0.0.0.0"}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "managed by dbrig") {
		t.Errorf("start with bind-address: %v; want it refused", err)
	}
	if err := s.CheckSettingNames(ctx, []string{"innodb_buffer_pool_size", "large-pages", "performance_schema"}); err != nil {
		t.Errorf("known names refused: %v", err)
	}
	if err := s.CheckSettingNames(ctx, []string{"innodb_bufer_pool_size"}); err == nil || !strings.Contains(err.Error(), "did you mean innodb_buffer_pool_size") {
		t.Errorf("a typo: %v; want the name meant", err)
	}
	if err := s.CheckSettingNames(ctx, []string{"shared_buffers"}); err == nil {
		t.Error("a PostgreSQL setting passed as MariaDB's")
	}
	if err := s.Preflight(ctx, []map[string]string{{"innodb_buffer_pool_size": "1G"}}); err != nil {
		t.Errorf("preflight: %v", err)
	}
	v, err := s.DataFormat(ctx)
	if err != nil || strings.Count(v, ".") != 1 {
		t.Errorf("data format %q (%v), want major.minor", v, err)
	}
	// The server still starts after all that, and is the one found.
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

// TestCrashAndConfinement: a server confined to a memory size runs inside
// its cgroup; killed from outside, it is reported crashed, and a stop
// acknowledges that and removes the cgroup.
func TestCrashAndConfinement(t *testing.T) {
	s := mariatest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := server.Confinement{Memory: 1 << 30, CPUs: "0"}
	servertest.RequireCgroups(t, c)
	if err := s.Confine(c); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, map[string]string{"innodb_buffer_pool_size": "128M"}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.MemoryCgroup == "" || st.Confinement != c {
		t.Fatalf("status %+v: want the memory cgroup and the confinement", st)
	}
	procs, err := os.ReadFile(st.MemoryCgroup + "/cgroup.procs")
	if err != nil || !strings.Contains("\n"+string(procs), "\n"+strconv.Itoa(st.PID)+"\n") {
		t.Errorf("pid %d not in %s/cgroup.procs (%q, %v)", st.PID, st.MemoryCgroup, procs, err)
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if st, _ = s.Status(ctx); st.State != server.Running {
			break
		}
	}
	if st.State != server.Crashed || !strings.Contains(st.Reason, "without a clean shutdown") {
		t.Errorf("after SIGKILL: %s (%s); want crashed", st.State, st.Reason)
	}
	if err := s.Stop(ctx); !errors.Is(err, server.ErrCrashed) {
		t.Errorf("stop after the crash: %v; want ErrCrashed", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("a second stop: %v", err)
	}
	if _, err := os.Stat(st.MemoryCgroup); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup %s still there after stop (%v)", st.MemoryCgroup, err)
	}
}
