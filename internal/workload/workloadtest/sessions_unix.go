//go:build unix

package workloadtest

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// ServerSessions runs run while it watches url's database on PostgreSQL,
// and checks that the server saw the pool's sessions and the run's
// control session, never one a terminal.
func ServerSessions(t testing.TB, url string, sessions int, run func()) {
	t.Helper()
	most := pgtest.WatchClientBackends(t, url)
	run()
	n := most()
	t.Logf("the server saw at most %d client sessions of the database", n)
	if n < sessions || n > sessions+1 {
		t.Errorf("the server saw at most %d client sessions of the database, want the %d sessions and the control one", n, sessions)
	}
}
