//go:build linux

package tprocc

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	runpkg "github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestBouncerPostgres: tproc-c through pgbouncer 1.18 in transaction
// pooling mode, 50 terminals on 4 sessions over a pool of 4 server
// connections. With default_query_exec_mode=exec, both modes run without
// an error: procs mode's stored-function calls, each one autocommit
// statement, and sql mode's pipelines, whose transaction keeps its server
// connection from the BEGIN of its first batch to the COMMIT of its last.
// In the default mode the sessions' statements prepared by name fail, in
// one line that says what to do, exit 2. The database's NOPM and transactions
// agree with the client's within 1%: the sessions' flushes at the
// window's edges reach every server connection (postgres.pooledFlush).
func TestBouncerPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	url := onPostgres(t, 1)
	w, _ := openBuilt(t, url, 1)
	pgtest.NoAutovacuum(t, url)
	bounced := pgtest.Bouncer(t, url, 4)
	for _, c := range []struct{ mode, exec string }{
		{workload.ModeProcs, "exec"}, {workload.ModeSQL, "exec"}, {workload.ModeProcs, ""},
	} {
		t.Run(c.mode+"/"+c.exec, func(t *testing.T) {
			u := bounced
			if c.exec != "" {
				u += "&default_query_exec_mode=" + c.exec
			}
			doc, err := runBounced(ctx, t, w, u, c.mode)
			if c.exec == "" {
				t.Logf("in the default mode: %v", err)
				if err == nil || !strings.Contains(err.Error(), "add default_query_exec_mode=exec to the URL") ||
					!errors.As(err, new(*exitcode.UserError)) {
					t.Errorf("statements prepared by name through pgbouncer: %v; want them missing, and what to do (exit 2)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var done, retries int64
			for _, tx := range doc.Transactions {
				done += tx.Count
				retries += tx.Retries
				if tx.Errors > 0 {
					t.Errorf("%s: %d errors: %s", tx.Name, tx.Errors, tx.ErrorSample)
				}
			}
			if done == 0 || doc.Sessions == nil || doc.Sessions.Sessions != 4 || len(doc.Marks) != 2 {
				t.Fatalf("%d transactions, sessions %+v, %d marks; want some, on 4 sessions, two", done, doc.Sessions, len(doc.Marks))
			}
			// Each retry's failed attempt is a rollback the database counts.
			db := doc.Marks[1].Values[workload.Xacts] - doc.Marks[0].Values[workload.Xacts] - retries
			nopm, _ := doc.Metric(metricNOPM)
			t.Logf("%d transactions by the database's count, %d by the client's, %d retries; NOPM %.0f and %.0f", db, done, retries, *nopm.DB, *nopm.Client)
			if math.Abs(float64(db)/float64(done)-1) > 0.01 || math.Abs(*nopm.DB / *nopm.Client - 1) > 0.01 {
				t.Errorf("the database's and the client's counts are more than 1%% apart")
			}
		})
	}
}

// runBounced runs w's mix in mode on u for a 6 s window: 50 terminals on
// 4 sessions.
func runBounced(ctx context.Context, t *testing.T, w *tprocc, u, mode string) (*result.Document, error) {
	t.Helper()
	tg, err := dbtarget.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	w.mode = mode
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return runpkg.Run(ctx, tg, w, r, runpkg.Options{VUs: 50, Connections: 4, Rampup: time.Second, Duration: 6 * time.Second})
}
