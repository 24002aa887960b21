package blockio

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// pooledRun runs 30 terminals of w on 3 sessions for two seconds, through
// the driver, and checks that their operations ran without an error,
// never more than 3 sessions lent, each with its wait for a session.
func pooledRun(t *testing.T, tg dbtarget.Target, w *blockio) {
	t.Helper()
	ctx := context.Background()
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := driver.Run(ctx, r, driver.Config{VUs: 30, Connections: 3, Duration: 2 * time.Second, Classify: tg.Classify})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pool
	if p == nil || p.Terminals != 30 || p.Sessions != 3 || p.InUseMax < 1 || p.InUseMax > 3 {
		t.Fatalf("pool %+v, want 30 terminals on 3 sessions, at most 3 lent", p)
	}
	var done, errs int64
	for _, tx := range res.Tx {
		done += tx.Count
		errs += tx.Errors
	}
	if done == 0 || errs != 0 || p.Wait == nil || p.Wait.TotalCount() != done || res.Tally[tRows] == 0 {
		t.Errorf("%d operations, %d errors, %v waits, tally %v; want operations, no errors, a wait each", done, errs, p.Wait, res.Tally)
	}
}

// TestPooledSQLite: block-io's terminals share a pool of sessions, reads
// and updates on both tables.
func TestPooledSQLite(t *testing.T) {
	w := &blockio{scale: "2048", schemas: 2, loaders: 1, seed: 1, workUnit: 32, updatePct: 20, redo: redoLite, hotspotSize: "8MB"}
	pooledRun(t, build(t, "sqlite:"+t.TempDir()+"/b.db", w), w)
}

// TestPooledPostgres: on PostgreSQL the server sees the pool's 3 sessions
// and the run's control session, never one a terminal.
func TestPooledPostgres(t *testing.T) {
	url := pgtest.NewDB(t)
	w := &blockio{scale: "2048", schemas: 2, loaders: 1, seed: 1, workUnit: 32, updatePct: 20, redo: redoLite, hotspotSize: "8MB"}
	tg := build(t, url, w)
	most := pgtest.WatchClientBackends(t, url)
	pooledRun(t, tg, w)
	n := most()
	t.Logf("the server saw at most %d client sessions of the database", n)
	if n < 3 || n > 4 {
		t.Errorf("the server saw at most %d client sessions of the database, want the 3 sessions and the control one", n)
	}
}
