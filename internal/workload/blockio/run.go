package blockio

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/workload"
)

// Operation types, in the order of the names the driver reports.
const (
	txRead = iota
	txUpdate
)

var txNames = []string{"read", "update"}

// Tally slots.
const (
	tBlocks = iota // blocks the operations touched: rows and index pages
	tRows          // rows read or updated, each a block of its own
)

var tallyNames = []string{"blocks", "rows"}

// Keys of the marks beyond the target's own.
const (
	markLogical  = "blks_logical"
	markPhysical = "blks_read"
)

// runConfig is what every virtual user of a run shares, read-only.
type runConfig struct {
	Mode               string
	Scale              int64
	Schemas            int
	BlockSize, Width   int
	WorkUnit           int64
	UpdatePct          int
	Redo               string
	Hotspot            int
	HotKeys            int64
	ThinkMin, ThinkMax time.Duration
	Seed               uint64
	// PerLeaf and Height are the key index's shape, for the client's count
	// of the index pages a range reads.
	PerLeaf int64
	Height  int
	// RowPages is how many pages finding one row reads: its own block in a
	// heap, the primary key's levels where the rows are the leaves of a
	// tree (InnoDB's).
	RowPages int64
	Q        workload.SQLFile
	// reads and updates are each table's statements, in table order;
	// loops, in loop mode, each table's call of its loop.
	reads, updates, loops []string
	// live counts loop mode's operations as its calls end.
	live *loopTotals
}

// runner is an opened block-io run.
type runner struct {
	// Halves makes the virtual users, pooled or not.
	workload.Halves[*terminal, *session]
	t      dbtarget.Target
	cfg    runConfig
	schema workload.SQLFile
	// ctl reads the marks, on a connection no virtual user shares.
	ctl *workload.Conn
	// terminals is how many terminals the run made, one past the
	// highest id.
	terminals atomic.Int64
}

// made counts terminal id among the run's.
func (r *runner) made(id int) {
	for n := r.terminals.Load(); int64(id) >= n && !r.terminals.CompareAndSwap(n, int64(id)+1); n = r.terminals.Load() {
	}
}

// shareSlack is how far, in points, the window's update share may stray
// from --update-pct: the quota is exact over each hundred operations of a
// terminal, but the window's two edges cut each terminal's hundreds, and
// the quota takes its updates early in a hundred, so each edge can leave
// up to pct(100-pct)/100 updates more or fewer; and half a point more.
func shareSlack(pct int, terminals, ops int64) float64 {
	if ops == 0 {
		return 0.5
	}
	return 0.5 + float64(2*terminals)*float64(pct*(100-pct))/float64(ops)
}

// CheckRun checks the run options that need no database
// (workload.RunChecker).
func (w *blockio) CheckRun() error {
	_, _, err := w.validate()
	return err
}

// validate checks the run options that need no database and returns the
// think time's range.
func (w *blockio) validate() (thinkMin, thinkMax time.Duration, err error) {
	switch {
	case w.workUnit < 1:
		return 0, 0, exitcode.Userf("--work-unit must be at least 1, got %d", w.workUnit)
	case w.updatePct < 0 || w.updatePct > 100:
		return 0, 0, exitcode.Userf("--update-pct must be 0 to 100, got %d", w.updatePct)
	case w.redo != redoLite && w.redo != redoHeavy:
		return 0, 0, exitcode.Userf("--redo %q: use lite or heavy", w.redo)
	case w.hotspot < 0:
		return 0, 0, exitcode.Userf("--hotspot must be 0 (none) or more, got %d", w.hotspot)
	case w.mode != "" && w.mode != workload.ModeProcs && w.mode != workload.ModeSQL && w.mode != modeLoop:
		return 0, 0, exitcode.Userf("--mode %q: use procs, sql or loop", w.mode)
	}
	if w.think == "" {
		return 0, 0, nil
	}
	lo, hi, ok := strings.Cut(w.think, ",")
	thinkMin, err1 := time.ParseDuration(strings.TrimSpace(lo))
	thinkMax, err2 := time.ParseDuration(strings.TrimSpace(hi))
	if !ok || err1 != nil || err2 != nil || thinkMin < 0 || thinkMax < thinkMin {
		return 0, 0, exitcode.Userf("--think %q: want MIN,MAX durations, such as 10ms,50ms", w.think)
	}
	return thinkMin, thinkMax, nil
}

func (w *blockio) Open(ctx context.Context, t dbtarget.Target) (workload.Run, error) {
	thinkMin, thinkMax, err := w.validate()
	if err != nil {
		return nil, err
	}
	var o *workload.Opened[meta]
	if w.mode == modeLoop {
		o, err = openLoop(ctx, t, w.think)
	} else {
		o, err = workload.OpenRun(ctx, t, sqlFiles, w.mode, "op.sql", readMeta)
	}
	if err != nil {
		return nil, err
	}
	cfg := runConfig{
		Mode: o.Mode, WorkUnit: int64(w.workUnit), UpdatePct: w.updatePct, Redo: w.redo, Hotspot: w.hotspot,
		ThinkMin: thinkMin, ThinkMax: thinkMax, Q: o.SQL, live: &loopTotals{},
	}
	if err := w.complete(ctx, o.Built, &cfg); err != nil {
		o.Close()
		return nil, err
	}
	r := &runner{t: t, cfg: cfg, schema: o.Schema, ctl: &o.Conn}
	r.Halves = workload.Halves[*terminal, *session]{
		Terminal: func(id int) *terminal { r.made(id); tm := newTerminal(&r.cfg, id); return &tm },
		Open:     func(ctx context.Context) (*session, error) { return openSession(ctx, r.t, &r.cfg) },
	}
	r.Reseed(workload.RunSeed())
	return r, nil
}

var _ workload.Seeded = (*runner)(nil)

func (r *runner) Seed() uint64 { return r.cfg.Seed }

// Reseed sets the seed of the terminals' streams, the run's only draw.
func (r *runner) Reseed(seed uint64) { r.cfg.Seed = seed }

var _ workload.Resummarizer = (*blockio)(nil)

// Resummarize summarizes f with a runner made from its config: the
// update share the audit checks, and the rows an operation reads.
func (w *blockio) Resummarize(f workload.Figures) (workload.Summary, error) {
	c := workload.ReadConfig(f.Config)
	r := &runner{cfg: runConfig{Mode: c.String("mode"), UpdatePct: c.Int("update_pct"), WorkUnit: int64(c.Int("work_unit")), RowPages: int64(c.Int("row_pages"))}}
	// Each virtual user was a terminal, pooled or not.
	r.terminals.Store(int64(c.Int("vus")))
	return workload.Resummarize(r, f, c)
}

// complete fills in cfg from what the build recorded, read on b.
func (w *blockio) complete(ctx context.Context, b *workload.Built[meta], cfg *runConfig) error {
	m := b.Meta
	cfg.Scale, cfg.Schemas, cfg.BlockSize = m.scale, m.schemas, m.blockSize
	if cfg.WorkUnit > cfg.Scale {
		return exitcode.Userf("--work-unit %d is more than the %d blocks a table has", cfg.WorkUnit, cfg.Scale)
	}
	var blockSize int
	err := b.S.QueryRow(ctx, b.Schema.Get("geometry")).Scan(&blockSize, &cfg.Width)
	if err != nil {
		return fmt.Errorf("read the block size: %w", err)
	}
	if cfg.Hotspot > 0 {
		size, err := human.ParseSize(w.hotspotSize)
		if err != nil {
			return exitcode.Userf("--hotspot-size: %v", err)
		}
		cfg.HotKeys = min(max(size/int64(cfg.BlockSize), cfg.WorkUnit), cfg.Scale)
	}
	cfg.PerLeaf, cfg.Height = indexShape(cfg.Scale, m.pages.indexPages)
	if cfg.RowPages, err = rowPages(ctx, b.S, b.Schema); err != nil {
		return err
	}
	prefix := ""
	if cfg.Mode == workload.ModeProcs {
		prefix = "call:"
	}
	for i := 1; i <= cfg.Schemas; i++ {
		if cfg.Mode == modeLoop {
			cfg.loops = append(cfg.loops, forTable(cfg.Q.Get("call:loop"), tableName(i)))
			continue
		}
		cfg.reads = append(cfg.reads, forTable(cfg.Q.Get(prefix+"read"), tableName(i)))
		cfg.updates = append(cfg.updates, forTable(cfg.Q.Get(prefix+"update_"+cfg.Redo), tableName(i)))
	}
	return nil
}

// rowProbes is how many times rowPages counts a row's pages.
const rowProbes = 3

// rowPages counts the pages a lookup of one row reads, where the dialect
// can ("row_pages"): the least of a few counts, since a count that is the
// whole server's may take in other sessions' reads, never fewer. A heap
// reads the row's block alone.
func rowPages(ctx context.Context, s dbtarget.Session, q workload.SQLFile) (int64, error) {
	stmt, ok := q["row_pages"]
	if !ok {
		return 1, nil
	}
	least := int64(0)
	for i := range rowProbes {
		var n int64
		if err := s.QueryRow(ctx, forTable(stmt, tableName(1))).Scan(&n); err != nil {
			return 0, fmt.Errorf("count the pages of a row's lookup: %w", err)
		}
		if i == 0 || n < least {
			least = n
		}
	}
	return max(least, 1), nil
}

func (r *runner) TxNames() []string {
	if r.cfg.Mode == modeLoop {
		return loopTxNames
	}
	return txNames
}

func (r *runner) TallyNames() []string {
	if r.cfg.Mode == modeLoop {
		return loopTallyNames
	}
	return tallyNames
}

var _ driver.Pooled = (*runner)(nil)

func (r *runner) Config() map[string]any {
	c := r.cfg
	cfg := map[string]any{
		"mode": c.Mode, "scale": c.Scale, "schemas": c.Schemas, "block_size": c.BlockSize,
		"work_unit": c.WorkUnit, "update_pct": c.UpdatePct, "redo": c.Redo, "seed": c.Seed,
		"index_height": c.Height, "index_keys_per_leaf": c.PerLeaf, "row_pages": c.RowPages,
	}
	if c.Hotspot > 0 {
		cfg["hotspot"], cfg["hotspot_keys"] = c.Hotspot, c.HotKeys
	}
	if c.ThinkMax > 0 {
		cfg["think"] = c.ThinkMin.String() + "," + c.ThinkMax.String()
	}
	return cfg
}

// Mark reads the target's own counters and, where the dialect has them,
// the database's logical and physical reads.
func (r *runner) Mark(ctx context.Context) (workload.Mark, error) {
	v := map[string]int64{}
	if _, ok := r.schema["mark"]; !ok {
		return workload.MarkServer(ctx, r.t, v, nil, nil)
	}
	// The mark's own query reads catalog blocks in the measured database
	// whenever its session's caches were reset (by other databases' DDL,
	// say): hundreds of them, which would count as the workload's. So it
	// reads twice, publishing the first read's blocks before the second,
	// whose session's caches are then warm and whose figures count.
	return workload.MarkServer(ctx, r.t, v, r.ctl, func() error {
		var logical, physical int64
		for i := range 2 {
			if err := r.ctl.ReadRow(ctx, r.schema.Get("mark"), &logical, &physical); err != nil {
				return fmt.Errorf("read the database's block reads: %w", err)
			}
			if i == 0 {
				if err := r.ctl.Flush(ctx); err != nil {
					return fmt.Errorf("publish the mark's own reads: %w", err)
				}
			}
		}
		v[markLogical], v[markPhysical] = logical, physical
		return nil
	})
}

// blocksPerOp is about how many blocks an operation touches: its rows and
// the index's pages, for live rates; the summary counts them exactly.
func (r *runner) blocksPerOp() float64 {
	c := r.cfg
	return float64(c.WorkUnit*c.RowPages) + float64(c.Height) + float64(c.WorkUnit-1)/float64(c.PerLeaf)
}

func (r *runner) Progress(counts []int64) string {
	v := r.Rates(counts)
	return fmt.Sprintf("ops/s %6.0f  logical reads/s %8.0f", v[metricOps], v[metricLogical])
}

// Rates has no physical reads: only the database sees them.
func (r *runner) Rates(counts []int64) map[string]float64 {
	if r.cfg.Mode == modeLoop {
		return r.loopRates(counts)
	}
	var ops int64
	for _, c := range counts {
		ops += c
	}
	return map[string]float64{metricOps: float64(ops), metricLogical: float64(ops) * r.blocksPerOp()}
}

// operations are the window's operations and updates among them: the
// driver's counts, or in loop mode the loop's.
func (r *runner) operations(res *driver.Result) (ops, updates int64) {
	if r.cfg.Mode == modeLoop {
		return res.Tally[tReads] + res.Tally[tUpdates], res.Tally[tUpdates]
	}
	for _, tx := range res.Tx {
		ops += tx.Count
	}
	return ops, res.Tx[txUpdate].Count
}

// lioTolerance is how far apart the two sides' logical reads may fall and
// still agree, without updates (with them the database counts more, see
// Summarize): InnoDB's page requests came within 2% of the client's count
// (TestLoopMariaDB), PostgreSQL's within 1%.
const lioTolerance = 0.02

func (r *runner) Summarize(res *driver.Result, start, end workload.Mark) workload.Summary {
	ops, updates := r.operations(res)
	var opsClient, lioClient float64
	if w := res.WindowSeconds(); w > 0 {
		opsClient = float64(ops) / w
		lioClient = float64(res.Tally[tBlocks]) / w
	}
	physical := workload.Rate(start, end, markPhysical, true).Value
	logical := workload.Rate(start, end, markLogical, true)
	opsDB := workload.Rate(start, end, workload.Xacts, true)
	lioValue := workload.Value{DB: logical.Value, Client: &lioClient}
	if r.cfg.UpdatePct == 0 {
		lioValue.Tolerance = lioTolerance
	}
	s := workload.Summary{Values: map[string]workload.Value{
		metricPhysical: {DB: physical},
		metricLogical:  lioValue,
		metricOps:      {DB: opsDB.Value, Client: &opsClient, Tolerance: workload.Tolerance},
	}}
	lio := workload.Agreement("Logical reads", logical, lioClient)
	if r.cfg.UpdatePct > 0 && logical.Value != nil && lioClient > 0 {
		// An update visits each block again to write it, and its dead rows
		// bring vacuum's reads: the database counts both, the client only
		// the blocks it asked for.
		lio = fmt.Sprintf("Logical reads: the database counted %+.1f%% more than the client; with updates it also counts each block's second visit to write it and vacuum's reads, so the two sides compare only at --update-pct 0",
			(*logical.Value/lioClient-1)*100)
	}
	s.Lines = append(s.Lines, lio, workload.Agreement("Operations", opsDB, opsClient))
	if r.cfg.Mode == modeLoop {
		s.Lines = append(s.Lines, loopLine(res))
	}
	if physical == nil {
		s.Lines = append(s.Lines, "Physical reads: this database counts no cache misses of its own; the telemetry's device reads show what reached the disk")
	}
	if ops > 0 {
		s.Lines = append(s.Lines, r.touched(float64(res.Tally[tBlocks])/float64(ops)))
		share := float64(updates) / float64(ops) * 100
		slack := shareSlack(r.cfg.UpdatePct, r.terminals.Load(), ops)
		item := workload.AuditItem{Name: "update share", Value: share,
			Low: float64(r.cfg.UpdatePct) - slack, High: float64(r.cfg.UpdatePct) + slack, Result: "PASS"}
		switch {
		case ops < 1000:
			item.Result, item.Reason = "SKIP", "fewer than 1,000 operations"
		case share < item.Low || share > item.High:
			item.Result = "FAIL"
		}
		s.Audit = append(s.Audit, item)
	}
	return s
}

// touched says what an operation's blocks were, per operation.
func (r *runner) touched(blocks float64) string {
	c := r.cfg
	if c.RowPages > 1 {
		return fmt.Sprintf("Each operation touched %.1f blocks: %d rows of a block each, each found through the %d levels of the primary key's tree, its leaf the row's block, and the index's pages", blocks, c.WorkUnit, c.RowPages)
	}
	return fmt.Sprintf("Each operation touched %.1f blocks: %d rows of a block each, and the index's pages", blocks, c.WorkUnit)
}

func (r *runner) Close() error { return r.ctl.Close() }

// serial is an update's value: the terminal and its count of updates, so
// that no update writes what the row already holds, padded to the
// column's width.
func serial(buf []byte, term int, n int64) string {
	for i := range buf {
		buf[i] = 'y'
	}
	s := strconv.Itoa(term) + ":" + strconv.FormatInt(n, 10)
	copy(buf[max(len(buf)-len(s), 0):], s)
	return string(buf)
}
