//go:build unix

package postgres

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/jackc/pgx/v5"
)

// These tests manage their own servers rather than pgtest's shared one:
// starting, failing and stopping a server is what they test.

func requireServerBins(t *testing.T) string {
	t.Helper()
	bin, err := FindBinDir("")
	if err != nil {
		if os.Getenv("DBRIG_REQUIRE_PG") == "1" {
			t.Fatalf("DBRIG_REQUIRE_PG=1 but %v", err)
		}
		t.Skipf("%v (set PG_BIN, or DBRIG_REQUIRE_PG=1 to fail instead)", err)
	}
	return bin
}

// newTestServer initialises a cluster in a t.TempDir(), whose 0700 parent
// also exercises the root-to-unprivileged-user path.
func newTestServer(t *testing.T, dir string) *Server {
	t.Helper()
	requireServerBins(t)
	if dir == "" {
		dir = t.TempDir()
	}
	s := New(dir, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Init(ctx); err != nil {
		t.Fatalf("Init: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop at cleanup: %v", err)
		}
	})
	return s
}

func queryString(t *testing.T, url, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, sql).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// newVersionedServer is newTestServer's, with the version of its binaries
// and a context for the test's work on it.
func newVersionedServer(t *testing.T) (*Server, ServerVersion, context.Context) {
	t.Helper()
	s := newTestServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ver, err := s.BinVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, ver, ctx
}

func TestServerLifecycle(t *testing.T) {
	s, ver, ctx := newVersionedServer(t)
	if ver.Major < 10 {
		t.Fatalf("version %v (%q): major too small", ver, ver.Raw)
	}

	// A quote in a value checks the quoting through pg_ctl's shell.
	settings := map[string]string{"work_mem": "8MB", "cluster_name": "dbrig's test"}
	if err := s.Start(ctx, settings); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if !s.Running() || s.Port() == 0 || !s.Exists() {
		t.Fatalf("after Start: running=%v port=%d exists=%v", s.Running(), s.Port(), s.Exists())
	}
	st, err := s.Status(ctx)
	if err != nil || st.State != server.Running || st.URL != s.URL() || st.Socket != s.SocketURLFor("postgres") || st.Version != ver.Name() || !strings.HasPrefix(st.Version, "PostgreSQL "+ver.String()) {
		t.Errorf("Status of the running server: %+v, %v", st, err)
	}
	if len(s.SocketDir()+"/"+socketFile) >= server.MaxSocketPath {
		t.Errorf("socket dir %s too long", s.SocketDir())
	}

	u := s.URL()
	if want := "postgres://dbrig@127.0.0.1:"; !strings.HasPrefix(u, want) || !strings.HasSuffix(u, "/postgres?passfile="+url.QueryEscape(filepath.Join(s.Dir, "pgpass"))+"&sslmode=disable") {
		t.Errorf("URL() = %s", u)
	}
	v := queryString(t, u, "SELECT version()")
	if !strings.Contains(v, "PostgreSQL "+ver.String()) && !strings.Contains(v, "PostgreSQL "+strings.Fields(ver.Raw)[2]) {
		t.Errorf("select version() = %q, postgres --version = %q", v, ver.Raw)
	}
	for _, c := range []struct{ sql, want string }{
		{"SHOW work_mem", "8MB"},
		{"SHOW cluster_name", "dbrig's test"},
		{"SHOW listen_addresses", "127.0.0.1"},
		{"SHOW fsync", "on"},
		{"SHOW synchronous_commit", "on"},
		{"SELECT current_user", ServerUser},
		{"SHOW server_encoding", "UTF8"},
	} {
		if got := queryString(t, u, c.sql); got != c.want {
			t.Errorf("%s = %q, want %q", c.sql, got, c.want)
		}
	}

	// A name that needs quoting, to check it survives SQL and the URL.
	const db = "Bench DB-1"
	if err := s.CreateDB(ctx, db); err != nil {
		t.Fatalf("CreateDB: %v", err)
	}
	// A sweep resumed on its server creates its database again.
	if err := s.CreateDB(ctx, db); err != nil {
		t.Errorf("CreateDB of an existing database: %v", err)
	}
	if got := queryString(t, s.URLFor(db), "SELECT current_database()"); got != db {
		t.Errorf("over TCP: current_database() = %q, want %q", got, db)
	}
	if got := queryString(t, s.SocketURLFor(db), "SELECT current_database()"); got != db {
		t.Errorf("over the socket: current_database() = %q, want %q", got, db)
	}
	// DropDB must not be blocked by a session still connected.
	held, err := pgx.Connect(ctx, s.URLFor(db))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close(context.Background())
	if err := s.DropDB(ctx, db); err != nil {
		t.Fatalf("DropDB: %v", err)
	}
	if got := queryString(t, u, "SELECT count(*)::text FROM pg_database WHERE datname = 'Bench DB-1'"); got != "0" {
		t.Errorf("database still there after DropDB")
	}

	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if s.Running() {
		t.Error("Running() after Stop")
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "data", "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("postmaster.pid after Stop: %v", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := pgx.Connect(ctx, u); err == nil {
		t.Error("connected after Stop")
	}

	// Sweeps restart the same cluster with other settings.
	if err := s.Start(ctx, map[string]string{"work_mem": "16MB"}); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if got := queryString(t, s.URL(), "SHOW work_mem"); got != "16MB" {
		t.Errorf("after restart work_mem = %q", got)
	}
	if err := s.Start(ctx, nil); err == nil {
		t.Error("Start on a running server succeeded")
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop after restart: %v", err)
	}
}

func TestServerRejectedSetting(t *testing.T) {
	s, ver, ctx := newVersionedServer(t)
	cases := []struct {
		name     string
		settings map[string]string
		want     string
	}{
		{"bad value", map[string]string{"shared_buffers": "notavalue"},
			`invalid value for parameter "shared_buffers": "notavalue"`},
		{"unknown name", map[string]string{"no_such_setting": "1"},
			`unrecognized configuration parameter "no_such_setting"`},
	}
	// io_method arrived in PostgreSQL 18: a sweep over it must fail loudly
	// on older servers, and with a bad value on newer ones.
	if ver.Major < 18 {
		cases = append(cases, struct {
			name     string
			settings map[string]string
			want     string
		}{"io_method before 18", map[string]string{"io_method": "worker"},
			`unrecognized configuration parameter "io_method"`})
	} else {
		cases = append(cases, struct {
			name     string
			settings map[string]string
			want     string
		}{"io_method bad value", map[string]string{"io_method": "notamethod"},
			`invalid value for parameter "io_method"`})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			err := s.Start(ctx, c.settings)
			if err == nil {
				s.Stop(ctx)
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain the server's %q", err, c.want)
			}
			if strings.Contains(err.Error(), "starting PostgreSQL") {
				t.Errorf("error %q quotes routine log lines", err)
			}
			// pg_ctl notices the postmaster's exit; its 60 s timeout is a hang.
			if d := time.Since(began); d > 20*time.Second {
				t.Errorf("failure took %v", d)
			}
			if s.Running() {
				t.Error("Running() after a failed Start")
			}
		})
	}
	// Nothing of the failures lingers in the way of a good start.
	if err := s.Start(ctx, nil); err != nil {
		t.Fatalf("Start after failures: %v", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

func TestServerOwnedSettings(t *testing.T) {
	s := newTestServer(t, "")
	for _, name := range []string{"listen_addresses", "Port", "unix_socket_directories"} {
		err := s.Start(context.Background(), map[string]string{name: "*"})
		if err == nil || !strings.Contains(err.Error(), "managed by dbrig") {
			t.Errorf("Start with %s: err = %v, want a refusal", name, err)
		}
		if s.Running() {
			t.Fatalf("server started with %s overridden", name)
		}
	}
}

// A deep Dir would make the socket path longer than sun_path holds, so the
// socket moves to a short directory of its own, removed at Stop.
func TestServerLongDir(t *testing.T) {
	requireServerBins(t)
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	s := newTestServer(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Start(ctx, nil); err != nil {
		t.Fatalf("Start: %v", err)
	}
	sock := s.SocketDir()
	if strings.HasPrefix(sock, dir) {
		t.Errorf("socket dir %s is inside the long Dir", sock)
	}
	if got := queryString(t, s.SocketURLFor("postgres"), "SELECT current_user"); got != ServerUser {
		t.Errorf("current_user over the socket = %q", got)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket dir %s left after Stop: %v", sock, err)
	}
}

func TestFindBinDir(t *testing.T) {
	bogus := t.TempDir()
	if _, err := FindBinDir(bogus); err == nil || !strings.Contains(err.Error(), "postgres, initdb, pg_ctl missing") {
		t.Errorf("FindBinDir(empty dir) err = %v", err)
	}
	t.Setenv("PG_BIN", bogus)
	if _, err := FindBinDir(""); err == nil || !strings.Contains(err.Error(), "PG_BIN") {
		t.Errorf("bogus PG_BIN: err = %v", err)
	}
	os.Unsetenv("PG_BIN")
	bin := requireServerBins(t)
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		t.Errorf("FindBinDir() = %s without postgres: %v", bin, err)
	}
	if got, err := FindBinDir(bin); err != nil || got != bin {
		t.Errorf("FindBinDir(%s) = %s, %v", bin, got, err)
	}
}

func TestParseServerVersion(t *testing.T) {
	for _, c := range []struct {
		in           string
		major, minor int
	}{
		{"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n", 15, 18},
		{"postgres (PostgreSQL) 18.1", 18, 1},
		{"postgres (PostgreSQL) 17devel", 17, 0},
		{"postgres (PostgreSQL) 9.6.24", 9, 6},
	} {
		v, err := parseServerVersion(c.in)
		if err != nil || v.Major != c.major || v.Minor != c.minor {
			t.Errorf("parseServerVersion(%q) = %+v, %v; want %d.%d", c.in, v, err, c.major, c.minor)
		}
	}
	if _, err := parseServerVersion("psql (something) 1"); err == nil {
		t.Error("parsed a line without a PostgreSQL version")
	}
}

func TestServerLogExcerpt(t *testing.T) {
	log := `2026-11-21 06:08:33.333 UTC [4196] LOG:  starting PostgreSQL 15.18 on x86_64-pc-linux-gnu
2026-11-21 06:08:33.333 UTC [4196] LOG:  could not bind IPv4 address "127.0.0.1": Address already in use
2026-11-21 06:08:33.333 UTC [4196] HINT:  Is another postmaster already running on port 45679? If not, wait a few seconds and retry.
2026-11-21 06:08:33.333 UTC [4196] WARNING:  could not create listen socket for "127.0.0.1"
2026-11-21 06:08:33.333 UTC [4196] FATAL:  could not create any TCP/IP sockets
2026-11-21 06:08:33.335 UTC [4196] LOG:  database system is shut down
`
	want := `LOG: could not bind IPv4 address "127.0.0.1": Address already in use; ` +
		`HINT: Is another postmaster already running on port 45679? If not, wait a few seconds and retry.; ` +
		`WARNING: could not create listen socket for "127.0.0.1"; FATAL: could not create any TCP/IP sockets`
	if got := serverLogExcerpt(log); got != want {
		t.Errorf("serverLogExcerpt:\n got %s\nwant %s", got, want)
	}
	if got := serverLogExcerpt("some unprefixed line\nanother\n"); got != "some unprefixed line; another" {
		t.Errorf("fallback = %q", got)
	}
}
