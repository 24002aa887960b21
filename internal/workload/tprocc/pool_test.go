package tprocc

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
)

// TestPooledRunSQLite: tproc-c's terminals over a pool of the driver's
// sessions, end to end on a real database: 40 terminals on 3 sessions
// run the mix with no errors, never more than 3 sessions lent, each
// transaction's wait for a session recorded, and New-Orders committed.
func TestPooledRunSQLite(t *testing.T) {
	ctx := context.Background()
	w, tg := buildOn(t, "sqlite:"+filepath.Join(t.TempDir(), "p.db"), 1)
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := driver.Run(ctx, r, driver.Config{VUs: 40, Connections: 3, Duration: 2 * time.Second, Classify: tg.Classify})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pool
	if p == nil || p.Terminals != 40 || p.Sessions != 3 || p.InUseMax < 1 || p.InUseMax > 3 {
		t.Fatalf("pool %+v, want 40 terminals on 3 sessions, at most 3 lent", p)
	}
	var done, errs int64
	for _, tx := range res.Tx {
		done += tx.Count
		errs += tx.Errors
	}
	if done == 0 || errs != 0 || p.Wait == nil || p.Wait.TotalCount() != done {
		t.Errorf("%d transactions, %d errors, %v waits recorded; want transactions, no errors, a wait each", done, errs, p.Wait)
	}
	if orders := res.Tally[tNewOrders] - res.Tally[tRollbacks]; orders == 0 {
		t.Errorf("no New-Order committed: tally %v", res.Tally)
	}
}
