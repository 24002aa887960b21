package blockio

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
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// counter is one of a document's counters, which must be there.
func counter(t *testing.T, d *result.Document, name string) int64 {
	t.Helper()
	n, ok := d.Counters[name]
	if !ok {
		t.Fatalf("no counter %q among %v", name, d.Counters)
	}
	return n
}

// Loop mode on PostgreSQL: the sessions' loops read, the database's
// logical reads agree with the loop's own count of the blocks its ranges
// touch (which the per-operation modes' exact count checks), the document
// resummarizes to itself, the update quota holds, and the tables are
// still one row per block afterwards.
func TestLoopPostgres(t *testing.T) {
	url := pgtest.NewDB(t)
	w := &blockio{scale: "16MB", schemas: 2, loaders: 2, seed: 1, workUnit: 64, redo: redoLite, hotspotSize: "8MB", mode: modeLoop}
	tg := build(t, url, w)
	d := run(t, tg, w, 3)
	if d.Config["mode"] != modeLoop || len(d.Transactions) != 1 || d.Transactions[0].Name != "loop" {
		t.Fatalf("mode %v, transactions %+v: want loop mode's one row of calls", d.Config["mode"], d.Transactions)
	}
	reads, blocks := counter(t, d, "reads"), counter(t, d, "blocks")
	if reads < 1000 || counter(t, d, "updates") != 0 || counter(t, d, "rows") != reads*64 {
		t.Fatalf("counters %v: want over 1,000 reads of 64 rows each and no updates", d.Counters)
	}
	if per := float64(blocks) / float64(reads); per < 65 || per > 68 {
		t.Errorf("%.1f blocks per read, want 64 rows and the index's 1-4 pages", per)
	}
	lio := metric(t, d, metricLogical)
	if lio.DB == nil || lio.Client == nil || math.Abs(*lio.Client / *lio.DB - 1) > 0.01 {
		t.Errorf("logical reads %v (database) and %v (the loop's count): want both, within 1%%", lio.DB, lio.Client)
	}
	if !strings.Contains(strings.Join(d.Lines, "\n"), "Mode loop:") {
		t.Errorf("the summary does not say loop mode ran: %q", d.Lines)
	}
	workloadtest.Resummarizes(t, w, d)
	loopUpdates(t, tg, w)
}

// loopUpdates runs loop mode with a fifth of its operations updates, heavy
// ones and a hotspot: the share holds to the quota, the audit passes it,
// and the check still finds every row alone in its block. On PostgreSQL
// the table may have grown past its rows (where pruning falls behind, a
// hot row's new version goes to a new block; a CI run saw 2,658 blocks for
// 2,048 rows), which the check allows while no two rows share a block
// (TestCheckAfterUpdatesPostgres).
func loopUpdates(t *testing.T, tg dbtarget.Target, w *blockio) {
	t.Helper()
	w.updatePct, w.redo, w.hotspot = 20, redoHeavy, 5
	// The audit judges 1,000 operations or more: on MariaDB, beside the
	// other tests' servers, 2 loops did 712 in 5 s (a heavy update's commit
	// took 33 ms), so the window is 12 s.
	d := runFor(t, tg, w, 2, 12*time.Second)
	ops, updates := counter(t, d, "reads")+counter(t, d, "updates"), counter(t, d, "updates")
	// Each loop keeps the quota over its hundreds, as a terminal does: the
	// window's edges, one hundred of each of the 2 loops at each end, are
	// what move the share.
	if share, slack := float64(updates)/float64(ops)*100, shareSlack(20, 2, ops); ops < 1000 || math.Abs(share-20) > slack {
		t.Errorf("%d updates in %d operations: %.2f%%, want 20%% ± %.2f", updates, ops, share, slack)
	}
	if len(d.Audit) != 1 || d.Audit[0].Result != "PASS" {
		t.Errorf("audit %+v, want the update share's PASS", d.Audit)
	}
	out, ok := check(t, tg, w)
	if !ok {
		t.Errorf("after loop mode's updates, check failed:\n%s", out)
	}
	t.Logf("check after loop mode's updates:\n%s", out)
}

// Ctrl-C ends a loop-mode run within a call's second and keeps what it
// measured, and no loop is left running in the database.
func TestLoopInterruptedPostgres(t *testing.T) {
	loopInterrupted(t, pgtest.NewDB(t), `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CALL blockio%' AND state = 'active'`)
}

// loopInterrupted interrupts a loop-mode run on the database at url after
// 3 s; running counts the loops still running there.
func loopInterrupted(t *testing.T, url, running string) {
	w := &blockio{scale: "16MB", schemas: 1, loaders: 2, seed: 1, workUnit: 64, redo: redoLite, hotspotSize: "8MB", mode: modeLoop}
	tg := build(t, url, w)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := runpkg.Defaults()
	o.VUs, o.Rampup, o.Duration = 2, 0, time.Minute
	time.AfterFunc(3*time.Second, cancel)
	start := time.Now()
	d, err := runpkg.Run(ctx, tg, w, r, o)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the run took %s after a Ctrl-C at 3 s", took)
	}
	if !d.Interrupted || counter(t, d, "reads") == 0 {
		t.Errorf("interrupted %v, counters %v: want an interrupted run that kept its reads", d.Interrupted, d.Counters)
	}
	s, err := tg.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.QueryRow(context.Background(), running).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d loops still running (%v)", n, err)
	}
}

// Loop mode is refused in one line where the database cannot run it: in
// SQLite, which runs inside the client; and with --think, which paces a
// client that loop mode does not have.
func TestLoopRefused(t *testing.T) {
	w := &blockio{scale: "2048", schemas: 1, loaders: 1, seed: 1, workUnit: 32, redo: redoLite, hotspotSize: "8MB"}
	tg := build(t, "sqlite:"+t.TempDir()+"/b.db", w)
	w.mode = "lop"
	refused(t, tg, w, "use procs, sql or loop")
	w.mode = modeLoop
	refused(t, tg, w, "inside the client")
	url := pgtest.NewDB(t)
	pg, err := dbtarget.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	w.think = "1ms,2ms"
	refused(t, pg, w, "--think")
}

func refused(t *testing.T, tg dbtarget.Target, w *blockio, want string) {
	t.Helper()
	r, err := w.Open(context.Background(), tg)
	if err == nil {
		r.Close()
	}
	var ue *exitcode.UserError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: got %v, want a one-line user error about %s", tg.Kind(), err, want)
	}
}
