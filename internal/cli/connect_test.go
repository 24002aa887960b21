package cli_test

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// TestConnectErrorsSayWhatHappened: a PostgreSQL URL at a MariaDB
// server's port, and a MariaDB URL at a PostgreSQL server's port, each say
// in one line, within 5 s, that what answered there is not the kind the
// URL asks for; an address that takes no connection names itself and the
// timeout.
func TestConnectErrorsSayWhatHappened(t *testing.T) {
	t.Parallel()
	pg, maria := pgtest.Start(t), mariatest.Start(t)
	pgAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(pg.Port()))
	mariaAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(maria.Port()))
	hole := blackhole(t)
	cases := []struct{ url, want string }{
		{"postgres://dbrig@" + mariaAddr + "/x", mariaAddr + " answered, but not as PostgreSQL"},
		{"postgres://dbrig@" + mariaAddr + "/x?sslmode=disable", mariaAddr + " answered, but not as PostgreSQL"},
		{"mariadb://dbrig@" + pgAddr + "/x", pgAddr + " took the connection, but did not answer as MariaDB within 3s"},
		{"postgres://dbrig@" + hole + "/x?connect_timeout=1", hole + " did not answer within 1s"},
		{"mariadb://dbrig@" + hole + "/x?timeout=1s", hole + " did not answer within 1s"},
	}
	for _, c := range cases {
		start := time.Now()
		line := usageError(t, dbrig(t, "check", "tproc-c", "--target", c.url))
		took := time.Since(start)
		wantIn(t, "the error", line, c.want)
		if took > 5*time.Second {
			t.Errorf("%s: the error took %s, want at most 5s", c.url, took.Round(time.Millisecond))
		}
	}
}

// blackhole is a loopback address whose listener's accept queue is full,
// so that a connection to it is never taken: what an unreachable host
// looks like to a client.
func blackhole(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("a listener's full accept queue still takes connections here")
	return ""
}
