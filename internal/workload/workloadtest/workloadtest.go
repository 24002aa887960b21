// Package workloadtest holds what the workloads' tests share: a pooled
// run through the driver, checked as every pooled workload must pass it;
// a short run to its document, the figures a merge reads from one, and
// the checks of a Seeded run and of a Resummarizer (figures.go); on a
// unix host, where the test servers run, the sessions a PostgreSQL
// server saw of a pooled run (sessions_unix.go).
package workloadtest

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
)

// PooledRun runs terminals of r over a pool of sessions for two seconds
// through the driver, and checks that its transactions ran, none with an
// error, on at most sessions lent at once, each with its wait for a
// session. It returns the driver's result for the workload's own checks.
func PooledRun(t testing.TB, r driver.Workload, classify func(error) dbtarget.ErrClass, terminals, sessions int) *driver.Result {
	t.Helper()
	res, err := driver.Run(context.Background(), r, driver.Config{VUs: terminals, Connections: sessions, Duration: 2 * time.Second, Classify: classify})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pool
	if p == nil || p.Terminals != terminals || p.Sessions != sessions || p.InUseMax < 1 || p.InUseMax > sessions {
		t.Fatalf("pool %+v, want %d terminals on %d sessions, at most %d lent", p, terminals, sessions, sessions)
	}
	var done, errs int64
	for _, tx := range res.Tx {
		done += tx.Count
		errs += tx.Errors
	}
	if done == 0 || errs != 0 || p.Wait == nil || p.Wait.TotalCount() != done {
		t.Fatalf("%d transactions, %d errors, %v waits; want transactions, no errors, a wait each", done, errs, p.Wait)
	}
	return res
}
