package blockio

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	_ "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	runpkg "github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/jackc/pgx/v5"
)

// The update share is exact over every hundred operations, whatever the
// keys drawn: the quota, not chance, decides it.
func TestUpdateQuota(t *testing.T) {
	for _, pct := range []int{0, 1, 20, 50, 77, 100} {
		cfg := &runConfig{Scale: 100000, WorkUnit: 64, UpdatePct: pct}
		v := &terminal{cfg: cfg}
		v.r.Seed(uint64(pct), 1)
		for window := range 100 {
			updates := 0
			for range quotaWindow {
				if v.Next() == txUpdate {
					updates++
				}
				if v.lo < 0 || v.hi > cfg.Scale || v.hi-v.lo != cfg.WorkUnit {
					t.Fatalf("range (%d, %d] is outside 1..%d or not %d keys", v.lo, v.hi, cfg.Scale, cfg.WorkUnit)
				}
			}
			if updates != pct {
				t.Fatalf("update-pct %d: window %d had %d updates", pct, window, updates)
			}
		}
	}
}

func TestHotspot(t *testing.T) {
	cfg := &runConfig{Scale: 100000, WorkUnit: 64, Hotspot: 3, HotKeys: 1024}
	v := &terminal{cfg: cfg}
	v.r.Seed(1, 1)
	for i := 1; i <= 300; i++ {
		v.Next()
		if i%3 == 0 && v.hi > cfg.HotKeys {
			t.Fatalf("operation %d read up to key %d, outside the hot %d", i, v.hi, cfg.HotKeys)
		}
	}
}

func TestBadRunOptions(t *testing.T) {
	for _, c := range []struct {
		w    blockio
		want string
	}{
		{blockio{workUnit: 0, redo: redoLite}, "--work-unit"},
		{blockio{workUnit: 64, updatePct: 101, redo: redoLite}, "--update-pct"},
		{blockio{workUnit: 64, redo: "medium"}, "--redo"},
		{blockio{workUnit: 64, redo: redoLite, hotspot: -1}, "--hotspot"},
		{blockio{workUnit: 64, redo: redoLite, think: "10ms"}, "--think"},
		{blockio{workUnit: 64, redo: redoLite, think: "50ms,10ms"}, "--think"},
	} {
		_, _, err := c.w.validate()
		var ue *exitcode.UserError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want a user error about %s", c.w, err, c.want)
		}
	}
}

// build makes a small schema on url and returns the opened target.
func build(t *testing.T, url string, w *blockio) dbtarget.Target {
	t.Helper()
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if _, err := w.Build(ctx, tg, workload.BuildOptions{}); err != nil {
		t.Fatalf("build: %v", err)
	}
	var out bytes.Buffer
	ok, err := w.Check(ctx, tg, &out)
	if err != nil || !ok {
		t.Fatalf("check: %v, %v:\n%s", ok, err, out.String())
	}
	if _, err := w.Build(ctx, tg, workload.BuildOptions{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second build without --force: %v", err)
	}
	return tg
}

// build16MB builds one table of 16 MB on url, for runs of 64-key ranges.
func build16MB(t *testing.T, url string) (*blockio, dbtarget.Target) {
	t.Helper()
	w := &blockio{scale: "16MB", schemas: 1, loaders: 2, seed: 1, workUnit: 64, redo: redoLite, hotspotSize: "8MB"}
	return w, build(t, url, w)
}

// run runs w on tg for a few seconds.
func run(t *testing.T, tg dbtarget.Target, w *blockio, vus int) *result.Document {
	t.Helper()
	return runFor(t, tg, w, vus, 5*time.Second)
}

// runFor is run with a window of d.
func runFor(t *testing.T, tg dbtarget.Target, w *blockio, vus int, d time.Duration) *result.Document {
	t.Helper()
	ctx := context.Background()
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := runpkg.Defaults()
	o.VUs, o.Rampup, o.Duration = vus, time.Second, d
	doc, err := runpkg.Run(ctx, tg, w, r, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range doc.Transactions {
		if tx.Errors != 0 {
			t.Errorf("%s: %d errors: %s", tx.Name, tx.Errors, tx.ErrorSample)
		}
	}
	return doc
}

func metric(t *testing.T, d *result.Document, key string) result.Metric {
	t.Helper()
	m, ok := d.Metric(key)
	if !ok {
		t.Fatalf("no metric %s", key)
	}
	return m
}

// updateShare checks the run's update share and that the audit says so.
func updateShare(t *testing.T, d *result.Document, pct int) {
	t.Helper()
	var ops, updates int64
	for _, tx := range d.Transactions {
		ops += tx.Count
		if tx.Name == txNames[txUpdate] {
			updates = tx.Count
		}
	}
	share := float64(updates) / float64(ops) * 100
	// The quota is exact over each terminal's hundreds: only the window's
	// edges, which cut one of each of the 2 terminals' hundreds at each
	// end, move the share.
	if slack := shareSlack(pct, 2, ops); ops < 1000 || math.Abs(share-float64(pct)) > slack {
		t.Errorf("%d updates in %d operations: %.2f%%, want %d%% ± %.2f", updates, ops, share, pct, slack)
	}
	if len(d.Audit) != 1 || d.Audit[0].Result != "PASS" || math.Abs(d.Audit[0].High-float64(pct)-shareSlack(pct, 2, ops)) > 1e-9 {
		t.Errorf("audit %+v, want the update share's PASS, within its edges' slack for 2 terminals", d.Audit)
	}
}

func TestBlockIOSQLite(t *testing.T) {
	w := &blockio{scale: "2048", schemas: 2, loaders: 1, seed: 1, workUnit: 32, updatePct: 20, redo: redoHeavy, hotspotSize: "8MB"}
	tg := build(t, "sqlite:"+t.TempDir()+"/b.db", w)
	d := run(t, tg, w, 2)
	updateShare(t, d, 20)
	if p := metric(t, d, metricPhysical); p.DB != nil || p.Client != nil {
		t.Errorf("physical reads %v, %v: SQLite counts no cache misses, and the client cannot", p.DB, p.Client)
	}
	lio := metric(t, d, metricLogical)
	ops := metric(t, d, metricOps)
	// A range of 32 rows in an index of a few hundred keys a leaf.
	if per := *lio.Client / *ops.Client; per < 32 || per > 36 {
		t.Errorf("%.1f blocks per operation, want 32 rows and 1-3 index pages", per)
	}
}

// exactReads runs n operations on one session and compares the blocks the
// client counted with what the database's statistics count for them, with
// the session's statistics flushed before each reading, so that the
// comparison has none of the view's lag: the client's count must hold to
// within 1%. Where it does not, the relations autovacuum visited since
// the test began are named, from url's statistics.
func exactReads(t *testing.T, url string, tg dbtarget.Target, w *blockio, n int) {
	t.Helper()
	ctx := context.Background()
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run := r.(*runner)
	dv, err := run.NewVU(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	v := dv.(*workload.VU[*terminal, *session])
	defer v.Close()
	tally := make([]int64, len(tallyNames))
	blocks := func() int64 {
		if err := v.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		m, err := run.Mark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m.Values[markLogical]
	}
	ops := func(n int) {
		for range n {
			if err := v.Run(ctx, v.Next(), tally); err != nil {
				t.Fatal(err)
			}
		}
	}
	began := time.Now()
	ops(20) // plans and catalog caches, outside the count
	blocks()
	before, counted := blocks(), tally[tBlocks]
	ops(n)
	db, client := blocks()-before, tally[tBlocks]-counted
	t.Logf("%s: %d operations, %d blocks by the database's count, %d by the client's", w.mode, n, db, client)
	if math.Abs(float64(client)/float64(db)-1) > 0.01 {
		t.Errorf("%s: %d operations read %d blocks by the database's count, %d by the client's: more than 1%% apart; autovacuum visited %s since the test began",
			w.mode, n, db, client, autovacuumed(url, began))
	}
}

// autovacuumed names the relations of url's database that autovacuum
// vacuumed or analyzed since began, for a failure's message.
func autovacuumed(url string, began time.Time) string {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err.Error()
	}
	defer c.Close(ctx)
	var names []string
	err = c.QueryRow(ctx, `SELECT coalesce(array_agg(schemaname || '.' || relname), '{}') FROM pg_stat_all_tables
		WHERE greatest(last_autovacuum, last_autoanalyze) >= $1`, began).Scan(&names)
	if err != nil {
		return err.Error()
	}
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, ", ")
}

// On PostgreSQL the two sides' logical reads count the same blocks: the
// client's rows and index pages against pg_stat_database's hits and reads,
// on one session (exactReads) and over a run's window, whose edges read
// counters every session has published. Autovacuum's visits count in the
// database too: the catalog's blocks, a few dozen a minute, but once (a CI
// run) a table's whole heap, 1,900 blocks more than the client's 33,079
// while its 500 operations ran. So the test's tables are left out of it.
func TestBlockIOPostgres(t *testing.T) {
	url := pgtest.NewDB(t)
	w, tg := build16MB(t, url)
	pgtest.NoAutovacuum(t, url)
	for _, mode := range []string{workload.ModeProcs, workload.ModeSQL} {
		w.mode = mode
		exactReads(t, url, tg, w, 500)
		d := run(t, tg, w, 2)
		lio := metric(t, d, metricLogical)
		if lio.DB == nil || *lio.Client <= 0 {
			t.Fatalf("%s: logical reads %v (database) and %v (client)", mode, lio.DB, lio.Client)
		}
		t.Logf("%s: logical reads %.0f (database) and %.0f (client) per second", mode, *lio.DB, *lio.Client)
		if math.Abs(*lio.Client / *lio.DB - 1) > 0.01 {
			t.Errorf("%s: logical reads %.0f (database) and %.0f (client), want within 1%%", mode, *lio.DB, *lio.Client)
		}
		if p := metric(t, d, metricPhysical); p.DB == nil || p.Client != nil {
			t.Errorf("%s: physical reads %v (database) and %v (client), want the database's only", mode, p.DB, p.Client)
		}
	}
	w.updatePct, w.mode = 20, workload.ModeSQL
	d := run(t, tg, w, 2)
	updateShare(t, d, 20)
	s := telemetry.Summarize(d.Telemetry)
	if s.DB == nil || s.DB.Deltas[telemetry.WALBytes] <= 0 {
		t.Errorf("no WAL written by updates: %+v", s.DB)
	}
	var out bytes.Buffer
	if ok, err := w.Check(context.Background(), tg, &out); !ok || err != nil {
		t.Errorf("after updates, check: %v %v\n%s", ok, err, out.String())
	}
}

// A table that updates grew past its rows passes the check while each
// row is still alone in its block, and fails it once rows share blocks.
// A held snapshot keeps a page's old versions from being pruned, so that
// after about seven versions of its row the next goes to a new block; at
// fillfactor 10 that block holds it alone, at 100 it fills with others.
func TestCheckAfterUpdatesPostgres(t *testing.T) {
	w, tg := build16MB(t, pgtest.NewDB(t))
	ctx := context.Background()
	grow := func() {
		t.Helper()
		held, err := tg.Session(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		for _, stmt := range []string{"BEGIN ISOLATION LEVEL REPEATABLE READ", "SELECT count(*) FROM blockio1"} {
			if _, err := held.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		for range 8 {
			exec(t, tg, "UPDATE blockio1 SET n = n + 1")
		}
		if _, err := held.Exec(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
	}
	grow()
	out, ok := check(t, tg, w)
	if !ok || !strings.Contains(out, "each row alone in its block") {
		t.Errorf("a table grown past its rows, each still alone, failed the check:\n%s", out)
	}
	t.Logf("grown, rows alone:\n%s", out)
	exec(t, tg, "ALTER TABLE blockio1 SET (fillfactor = 100)")
	grow()
	if out, ok := check(t, tg, w); ok || !strings.Contains(out, "share a block") {
		t.Errorf("rows sharing blocks passed the check:\n%s", out)
	}
}
