//go:build linux

package pgtest

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/postgres"
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
	port := freePort(tb)
	cmd := exec.Command(bin, writeBouncerFiles(tb, dir, cred, pu, password, port, poolSize))
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
		tb.Fatalf("pgbouncer: %v\n%s", err, out.Bytes())
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
	bin := postgres.FindBouncer()
	if bin == "" {
		if os.Getenv("DBRIG_REQUIRE_PGBOUNCER") == "1" {
			tb.Fatal("pgtest: DBRIG_REQUIRE_PGBOUNCER=1 but pgbouncer is not installed")
		}
		tb.Skip("pgbouncer is not installed (apt-get install pgbouncer)")
	}
	return bin
}

// writeBouncerFiles writes pgbouncer's configuration and auth file into
// dir, for cred's user alone, and returns the configuration's path.
func writeBouncerFiles(tb testing.TB, dir string, cred *syscall.Credential, pu *url.URL, password string, port, poolSize int) string {
	tb.Helper()
	b := postgres.Bouncer{Dir: dir, Port: port, ServerHost: pu.Hostname(), ServerPort: pu.Port(),
		User: pu.User.Username(), Password: password, PoolSize: poolSize}
	for path, text := range b.Files() {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
		if err := server.Own(path, cred); err != nil {
			tb.Fatal(err)
		}
	}
	return b.Config()
}
