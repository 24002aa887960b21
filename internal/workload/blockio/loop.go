package blockio

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
)

// modeLoop runs each session's operations inside the database, as SLOB
// and pgio do, so that the client costs next to nothing: a session calls
// its table's loop (procs.sql), which chooses and runs operations until
// the next whole second on the server's clock, and calls it again. The
// run's figures are the database's counters and the loop's own counts;
// no operation's latency is seen. The loop ends each second rather than
// with the window so that the driver's window edges, progress, series
// and Ctrl-C work as in the other modes: a call a second costs the
// client about 0.1 ms of CPU, a few hundredths of a percent of a core
// for each session.
const modeLoop = "loop"

// loopSliceMS is how long, at most, one call of the loop runs.
const loopSliceMS = 1000

// Loop mode's one transaction type, a call of the loop, and its tallies
// beyond the per-operation modes' own.
const txLoop = 0

var (
	loopTxNames    = []string{"loop"}
	loopTallyNames = []string{"blocks", "rows", "reads", "updates"}
)

// Tally slots of loop mode beyond tBlocks and tRows.
const (
	tReads = iota + 2
	tUpdates
)

// loopTotals are the run's calls and their operations so far, all phases,
// for the live rates: the driver counts only the calls.
type loopTotals struct {
	calls, ops, blocks atomic.Int64
}

// openLoop opens a loop-mode run: only where the database runs the loop
// inside itself, which a dialect says by having a call:loop statement.
func openLoop(ctx context.Context, t dbtarget.Target, think string) (*workload.Opened[meta], error) {
	if !t.HasRoutines() {
		return nil, exitcode.Userf("--mode loop runs each session's operations inside the database server, and %s runs inside the client (no stored routines), so its loop would be the client's own CPU: use --mode sql", t.Kind())
	}
	q, err := sqlFor(t, "op.sql")
	if err != nil {
		return nil, err
	}
	if _, ok := q["call:loop"]; !ok {
		return nil, exitcode.Userf("--mode loop: block-io has no loop for %s yet: use --mode procs or sql", t.Kind())
	}
	if think != "" {
		return nil, exitcode.Userf("--think paces the client's operations, and --mode loop has none: the database runs them back to back; use --mode procs")
	}
	b, err := workload.OpenBuilt(ctx, t, sqlFiles, readMeta)
	if err != nil {
		return nil, err
	}
	if err := ensureLoop(ctx, t, b); err != nil {
		b.Close()
		return nil, err
	}
	return &workload.Opened[meta]{Built: b, Mode: modeLoop, SQL: q}, nil
}

// ensureLoop creates the tables' loops on a build made before loop mode
// had them.
func ensureLoop(ctx context.Context, t dbtarget.Target, b *workload.Built[meta]) error {
	var present bool
	if err := b.S.QueryRow(ctx, forTable(b.Schema.Get("loop_present"), tableName(1))).Scan(&present); err != nil {
		return fmt.Errorf("look for the loop: %w", err)
	}
	if present {
		return nil
	}
	return createProcs(ctx, t, b.S, b.Meta.schemas, "proc:loop")
}

// loopSeed is terminal id's seed of the database's random(), in [-1, 1].
func loopSeed(seed uint64, id int) float64 {
	return float64(workload.Mix(seed, uint64(id))>>11)/(1<<52) - 1
}

// loop runs one call of terminal tm's loop on its table; the terminal's
// place in the update quota goes in and comes back. A terminal's first
// call seeds the database's random() from the run's seed.
func (s *session) loop(ctx context.Context, tm *terminal, t driver.Tally) error {
	c := s.cfg
	var seed any
	if tm.ops == 0 {
		seed = loopSeed(c.Seed, tm.id)
	}
	var ops, updates, reads, writes, rows, blocks int64
	var due int
	err := s.S.QueryRow(ctx, c.loops[tm.id%c.Schemas], seed, loopSliceMS, c.Scale, c.WorkUnit, c.UpdatePct, c.Redo == redoHeavy,
		c.Hotspot, c.HotKeys, c.PerLeaf, c.Height, tm.id, c.Width, tm.ops, tm.left, tm.updates).
		Scan(&ops, &due, &updates, &reads, &writes, &rows, &blocks)
	if err != nil {
		return err
	}
	if rows != (reads+writes)*c.WorkUnit {
		return fmt.Errorf("%w: %d ranges of %d keys gave %d rows: the table is not as built", driver.ErrAbort, reads+writes, c.WorkUnit, rows)
	}
	tm.ops, tm.left, tm.updates = ops, due, updates
	// The loop counts a page a row; where finding a row reads more (the
	// levels of InnoDB's primary key above the row's leaf), they are added
	// here.
	blocks += rows * (c.RowPages - 1)
	t[tBlocks] += blocks
	t[tRows] += rows
	t[tReads] += reads
	t[tUpdates] += writes
	c.live.calls.Add(1)
	c.live.ops.Add(reads + writes)
	c.live.blocks.Add(blocks)
	return nil
}

// loopRates are the live rates of a second in which counts[txLoop] calls
// ended, from the operations and blocks of the run's calls so far.
func (r *runner) loopRates(counts []int64) map[string]float64 {
	l := r.cfg.live
	calls := l.calls.Load()
	if calls == 0 {
		return map[string]float64{metricOps: 0, metricLogical: 0}
	}
	n := float64(counts[txLoop]) / float64(calls)
	return map[string]float64{metricOps: n * float64(l.ops.Load()), metricLogical: n * float64(l.blocks.Load())}
}

// loopLine says how a loop-mode run ran and what its transaction row is.
func loopLine(res *driver.Result) string {
	return fmt.Sprintf("Mode loop: each session ran its operations inside the database, in %d calls of up to %d ms; "+
		"the loop row times those calls, not operations, whose latencies loop mode does not see (--mode procs measures them); "+
		"the client's side of the figures is the loop's own count", res.Tx[txLoop].Count, loopSliceMS)
}
