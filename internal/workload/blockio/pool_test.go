package blockio

import (
	"context"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// pooledRun runs 30 terminals of w on 3 sessions and checks, beyond what
// every pooled workload must pass, that rows were read.
func pooledRun(t *testing.T, tg dbtarget.Target, w *blockio) {
	t.Helper()
	r, err := w.Open(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if res := workloadtest.PooledRun(t, r, tg.Classify, 30, 3); res.Tally[tRows] == 0 {
		t.Errorf("no rows read: tally %v", res.Tally)
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
	workloadtest.ServerSessions(t, url, 3, func() { pooledRun(t, tg, w) })
}
