package blockio

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	_ "github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/workload"
)

// On MariaDB each row has a 16 KB leaf of InnoDB's primary key to itself
// (and its pad), the database counts every operation as a transaction,
// and the client's logical reads, each row found through the primary
// key's levels, follow InnoDB's page requests. These are the whole
// server's, and the test's server is this binary's own. The database
// counts about two pages an operation more than the client (the
// optimizer's estimate of the range), so the two sides hold to 2%.
func TestBlockIOMariaDB(t *testing.T) {
	w, tg := build16MB(t, mariatest.NewDB(t))
	for _, mode := range []string{workload.ModeProcs, workload.ModeSQL} {
		w.mode = mode
		d := run(t, tg, w, 2)
		lio, ops := metric(t, d, metricLogical), metric(t, d, metricOps)
		if lio.DB == nil || ops.DB == nil {
			t.Fatalf("%s: logical reads %v and operations %v on the database's side", mode, lio.DB, ops.DB)
		}
		t.Logf("%s: logical reads %.0f (database) and %.0f (client) per second", mode, *lio.DB, *lio.Client)
		if math.Abs(*lio.Client / *lio.DB - 1) > 0.02 {
			t.Errorf("%s: logical reads %.0f (database) and %.0f (client), want within 2%%", mode, *lio.DB, *lio.Client)
		}
		if math.Abs(*ops.Client / *ops.DB - 1) > 0.01 {
			t.Errorf("%s: operations %.1f/s (database) and %.1f/s (client), want within 1%%", mode, *ops.DB, *ops.Client)
		}
		if p := metric(t, d, metricPhysical); p.DB == nil || p.Client != nil {
			t.Errorf("%s: physical reads %v (database) and %v (client), want the database's only", mode, p.DB, p.Client)
		}
	}
	w.updatePct = 20
	for _, mode := range []string{workload.ModeProcs, workload.ModeSQL} {
		w.mode = mode
		// 12 s, as loop mode's: the audit judges 1,000 operations or
		// more, and beside the other tests' servers 2 terminals did 703
		// in 5 s, each update's commit 70 ms.
		updateShare(t, runFor(t, tg, w, 2, 12*time.Second), 20)
	}
	if out, ok := check(t, tg, w); !ok {
		t.Errorf("after updates, check failed:\n%s", out)
	}
	// Pads a tenth their size let three rows share a leaf once the table
	// is rebuilt: the check must say so.
	exec(t, tg, "UPDATE blockio1 SET c1 = '', c2 = '', c3 = '', c4 = '', c5 = '', c6 = '', c7 = '', c8 = '' WHERE pad = 1")
	exec(t, tg, "ALTER TABLE blockio1 FORCE")
	if out, ok := check(t, tg, w); ok || !strings.Contains(out, "FAIL") {
		t.Errorf("rows sharing leaves passed the check:\n%s", out)
	}
}

// TestPooledMariaDB: block-io's terminals share a pool of sessions on
// MariaDB too, reads and updates on both tables.
func TestPooledMariaDB(t *testing.T) {
	w := &blockio{scale: "1024", schemas: 2, loaders: 1, seed: 1, workUnit: 32, updatePct: 20, redo: redoLite, hotspotSize: "8MB"}
	pooledRun(t, build(t, mariatest.NewDB(t), w), w)
}

func check(t *testing.T, tg dbtarget.Target, w *blockio) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	ok, err := w.Check(context.Background(), tg, &out)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), ok
}

func exec(t *testing.T, tg dbtarget.Target, stmt string) {
	t.Helper()
	s, err := tg.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Exec(context.Background(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// Loop mode on MariaDB, as on PostgreSQL (TestLoopPostgres): the loops
// read, InnoDB's page requests agree with the loop's count to the 2% of
// the per-operation modes, the server's commits with its operations, the
// update quota holds, and the check still passes afterwards.
func TestLoopMariaDB(t *testing.T) {
	w, tg := build16MB(t, mariatest.NewDB(t))
	w.mode = modeLoop
	d := run(t, tg, w, 2)
	if d.Config["mode"] != modeLoop || len(d.Transactions) != 1 || d.Transactions[0].Name != "loop" {
		t.Fatalf("mode %v, transactions %+v: want loop mode's one row of calls", d.Config["mode"], d.Transactions)
	}
	reads := counter(t, d, "reads")
	if reads < 1000 || counter(t, d, "updates") != 0 || counter(t, d, "rows") != reads*64 {
		t.Fatalf("counters %v: want over 1,000 reads of 64 rows each and no updates", d.Counters)
	}
	lio, ops := metric(t, d, metricLogical), metric(t, d, metricOps)
	if lio.DB == nil || lio.Client == nil || ops.DB == nil || ops.Client == nil {
		t.Fatalf("logical reads %v/%v and operations %v/%v (database/loop): want both sides", lio.DB, lio.Client, ops.DB, ops.Client)
	}
	t.Logf("logical reads %.0f (database) and %.0f (loop) per second", *lio.DB, *lio.Client)
	if math.Abs(*lio.Client / *lio.DB - 1) > 0.02 {
		t.Errorf("logical reads %.0f (database) and %.0f (loop), want within 2%%", *lio.DB, *lio.Client)
	}
	if math.Abs(*ops.Client / *ops.DB - 1) > 0.01 {
		t.Errorf("operations %.1f/s (database) and %.1f/s (loop), want within 1%%", *ops.DB, *ops.Client)
	}
	// A build made before loop mode had the loop and the write it calls
	// gets them on opening.
	exec(t, tg, "DROP PROCEDURE blockio1_loop")
	exec(t, tg, "DROP PROCEDURE blockio1_write")
	loopUpdates(t, tg, w)
}

// Ctrl-C ends a loop-mode run on MariaDB within a call's second, as on
// PostgreSQL (TestLoopInterruptedPostgres).
func TestLoopInterruptedMariaDB(t *testing.T) {
	loopInterrupted(t, mariatest.NewDB(t), `SELECT count(*) FROM information_schema.processlist WHERE info LIKE 'CALL blockio%'`)
}
