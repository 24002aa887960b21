//go:build linux

package pgtest

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// Bouncer starts pgbouncer in transaction pooling mode in front of the
// server of url (a URL of this package's, for any of its databases) and
// returns url as it reaches the same database through pgbouncer, which
// stops when the test ends. Up to poolSize server connections serve each
// database. The test is skipped when pgbouncer is not installed (Debian's
// package puts it in /usr/sbin), unless DBRIG_REQUIRE_PGBOUNCER=1, when
// it fails: CI installs it.
//
// As root, pgbouncer runs as the unprivileged user the servers run as, as
// it refuses root too. It checks clients' passwords with scram-sha-256,
// against the server's own password in its auth file, which it also uses
// to log in to the server; the URL's password file serves any host, so it
// serves pgbouncer's too. Its check query is off: the SELECT 1 it runs on
// a server connection idle for a while would count in the database's
// transactions, which tests compare with the client's.
func Bouncer(tb testing.TB, u string, poolSize int) string {
	tb.Helper()
	bin := bouncerBin(tb)
	pu, err := url.Parse(u)
	if err != nil {
		tb.Fatal(err)
	}
	_, password := servertest.SplitPassfile(tb, u)
	var cred *syscall.Credential
	runAs := ""
	if os.Geteuid() == 0 {
		if cred, runAs, err = server.Unprivileged("", "postgres", "pgbouncer"); err != nil {
			tb.Fatal(err)
		}
	}
	dir := tb.TempDir()
	if err := server.CheckReachable(dir, cred, runAs, "pgbouncer", true); err != nil {
		tb.Fatal(err)
	}
	// Its log is written there.
	if err := server.Own(dir, cred); err != nil {
		tb.Fatal(err)
	}
	port := freePort(tb)
	writeBouncerFiles(tb, dir, cred, pu, password, port, poolSize)
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Pdeathsig: an interrupted test run leaves no pgbouncer behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := listening(addr, exited); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
		tb.Fatalf("pgbouncer: %v\n%s%s", err, out.Bytes(), log)
	}
	pu.Host = addr
	return pu.String()
}

// freePort is a TCP port on loopback that nothing listens on just now.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// listening waits until addr takes connections, for up to 10 s, or until
// the process exits.
func listening(addr string, exited <-chan struct{}) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		select {
		case <-exited:
			return fmt.Errorf("exited before it listened on %s", addr)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not listening on %s after 10 s", addr)
}

// bouncerBin is the pgbouncer binary, or skips the test without one.
func bouncerBin(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("DBRIG_REQUIRE_PGBOUNCER") == "1" {
			tb.Fatal("pgtest: DBRIG_REQUIRE_PGBOUNCER=1 but pgbouncer is not installed")
		}
		tb.Skip("pgbouncer is not installed (apt-get install pgbouncer)")
	}
	return bin
}

// writeBouncerFiles writes pgbouncer's configuration and auth file into
// dir, for cred's user alone.
func writeBouncerFiles(tb testing.TB, dir string, cred *syscall.Credential, pu *url.URL, password string, port, poolSize int) {
	tb.Helper()
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = scram-sha-256
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 1000
server_check_query =
logfile = %s
`, pu.Hostname(), pu.Port(), port, filepath.Join(dir, "users.txt"), poolSize, filepath.Join(dir, "pgbouncer.log"))
	for name, text := range map[string]string{
		"pgbouncer.ini": ini,
		"users.txt":     quoted(pu.User.Username()) + " " + quoted(password) + "\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
		if err := server.Own(path, cred); err != nil {
			tb.Fatal(err)
		}
	}
}

// quoted is s as pgbouncer's auth file quotes it: in double quotes, each
// one in it doubled.
func quoted(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
