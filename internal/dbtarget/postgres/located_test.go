//go:build linux

package postgres

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestServerAddr: the target names the server it reaches as the server
// sees itself: over TCP its address and port, through pgbouncer the same
// (a pooler or a proxy in front of a failover must not hide it), and on a
// Unix socket, where the server says nothing of itself, the socket.
func TestServerAddr(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := pgtest.NewDB(t)
	srv := pgtest.Start(t)
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(srv.Port())
	tcp := net.JoinHostPort("127.0.0.1", port)
	for _, c := range []struct{ name, url, want string }{
		{"tcp", u, tcp},
		{"socket", srv.SocketURLFor(cfg.Database), filepath.Join(srv.SocketDir(), ".s.PGSQL."+port)},
		{"through pgbouncer", withMode(pgtest.Bouncer(t, u, 1), "exec"), tcp},
	} {
		tg, err := Open(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tg.(*Target).ServerAddr(ctx)
		tg.Close()
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}
