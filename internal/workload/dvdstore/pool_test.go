package dvdstore

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// pooledRun runs 30 terminals of r on 3 sessions for two seconds,
// through the driver, and checks that every step ran without an error,
// never more than 3 sessions lent, each with its wait for a session, and
// that orders were made.
func pooledRun(t *testing.T, r *runner, tg dbtarget.Target) {
	t.Helper()
	res, err := driver.Run(context.Background(), r, driver.Config{VUs: 30, Connections: 3, Duration: 2 * time.Second, Classify: tg.Classify})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pool
	if p == nil || p.Terminals != 30 || p.Sessions != 3 || p.InUseMax < 1 || p.InUseMax > 3 {
		t.Fatalf("pool %+v, want 30 terminals on 3 sessions, at most 3 lent", p)
	}
	var done int64
	for i, tx := range res.Tx {
		done += tx.Count
		if tx.Count == 0 || tx.Errors != 0 {
			t.Errorf("%s: %d steps, %d errors; want some, none", stepNames[i], tx.Count, tx.Errors)
		}
	}
	if p.Wait == nil || p.Wait.TotalCount() != done || res.Tally[tOrders] == 0 {
		t.Errorf("%d steps, %v waits, tally %v; want a wait each, and orders", done, p.Wait, res.Tally)
	}
}

func TestPooledSQLite(t *testing.T) {
	r, tg := openSmall(t, "sqlite:"+t.TempDir()+"/d.db", uint64(time.Now().UnixNano()), 0)
	pooledRun(t, r, tg)
}

// TestPooledPostgres: on PostgreSQL the server sees the pool's 3 sessions
// and the run's control session, never one a terminal.
func TestPooledPostgres(t *testing.T) {
	url := pgtest.NewDB(t)
	r, tg := openSmall(t, url, uint64(time.Now().UnixNano()), 0)
	most := pgtest.WatchClientBackends(t, url)
	pooledRun(t, r, tg)
	n := most()
	t.Logf("the server saw at most %d client sessions of the database", n)
	if n < 3 || n > 4 {
		t.Errorf("the server saw at most %d client sessions of the database, want the 3 sessions and the control one", n)
	}
}
