//go:build unix

package postgres

import (
	"context"
	"net"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

// TestNodesByAddress: nodes without a cluster_name are named by where
// they are reached, each host of the URL on its own (here one server,
// by two names), with the postmaster Local finds; a host that does not
// answer is left out.
func TestNodesByAddress(t *testing.T) {
	u, err := url.Parse(pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	u.Host = "127.0.0.1:" + port + ",localhost:" + port + ",127.0.0.1:1"
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	u.RawQuery = q.Encode()
	src := openSource(t, u.String())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pid, _, err := src.Local(ctx)
	if err != nil || pid <= 0 {
		t.Fatalf("Local: %d, %v", pid, err)
	}
	var name string
	if err := src.stats.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, "SHOW cluster_name").Scan(&name)
	}); err != nil || name != "" {
		t.Skipf("the test server has cluster_name %q (%v): its nodes would be named by it", name, err)
	}
	want := []telemetry.Node{{Name: net.JoinHostPort("127.0.0.1", port), PID: pid}, {Name: net.JoinHostPort("localhost", port), PID: pid}}
	if ns, err := src.Nodes(ctx); err != nil || !reflect.DeepEqual(ns, want) {
		t.Errorf("nodes %+v, %v; want %+v", ns, err, want)
	}
}

// TestHostsOf: each host of a URL comes once, with its ways to be
// reached in turn: sslmode=prefer tries TLS, then not.
func TestHostsOf(t *testing.T) {
	cfg, err := pgx.ParseConfig("postgres://u@a:1,b:2,a:3/db?sslmode=prefer")
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, h := range hostsOf(&cfg.Config) {
		var ways []string
		for _, f := range h {
			way := addrOf(f)
			if f.TLSConfig != nil {
				way += " tls"
			}
			ways = append(ways, way)
		}
		got = append(got, ways)
	}
	want := [][]string{{"a:1 tls", "a:1"}, {"b:2 tls", "b:2"}, {"a:3 tls", "a:3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hosts %v, want %v", got, want)
	}
}
