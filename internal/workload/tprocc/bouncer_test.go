//go:build linux

package tprocc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
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
// one line that says what to do. The database's NOPM and TPM beside the
// client's are logged: the flush at a window's edge reaches the server
// connection it lands on, not every one.
func TestBouncerPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	url := pgtest.NewDB(t)
	w, _ := buildOn(t, url, 1)
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
				if err == nil || !strings.Contains(err.Error(), "add default_query_exec_mode=exec to the URL") {
					t.Errorf("statements prepared by name through pgbouncer: %v; want them missing, and what to do", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var done, errs int64
			for _, tx := range doc.Transactions {
				done += tx.Count
				errs += tx.Errors
				if tx.Errors > 0 {
					t.Errorf("%s: %d errors: %s", tx.Name, tx.Errors, tx.ErrorSample)
				}
			}
			if done == 0 || doc.Sessions == nil || doc.Sessions.Sessions != 4 {
				t.Fatalf("%d transactions, sessions %+v; want some, on 4 sessions", done, doc.Sessions)
			}
			for _, key := range []string{metricNOPM, metricTPM} {
				m, _ := doc.Metric(key)
				if m.DB == nil || m.Client == nil {
					t.Fatalf("%s: no database or client figure", key)
				}
				t.Logf("%s: %.0f by the database, %.0f by the client (%+.2f%%)", key, *m.DB, *m.Client, (*m.DB / *m.Client - 1)*100)
			}
		})
	}
}

// runBounced runs w's mix in mode on u for a 10 s window: 50 terminals on
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
	return runpkg.Run(ctx, tg, w, r, runpkg.Options{VUs: 50, Connections: 4, Rampup: 2 * time.Second, Duration: 10 * time.Second})
}
