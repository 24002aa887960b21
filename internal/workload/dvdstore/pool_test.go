package dvdstore

import (
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// pooledRun runs 30 terminals of r on 3 sessions and checks, beyond what
// every pooled workload must pass, that every step ran and orders were
// made.
func pooledRun(t *testing.T, r *runner, tg dbtarget.Target) {
	t.Helper()
	res := workloadtest.PooledRun(t, r, tg.Classify, 30, 3)
	for i, tx := range res.Tx {
		if tx.Count == 0 {
			t.Errorf("%s: no steps", stepNames[i])
		}
	}
	if res.Tally[tOrders] == 0 {
		t.Errorf("no orders: tally %v", res.Tally)
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
	workloadtest.ServerSessions(t, url, 3, func() { pooledRun(t, r, tg) })
}
