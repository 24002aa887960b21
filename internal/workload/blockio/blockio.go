// Package blockio is the SLOB method: tables of one row per block, keys in
// random physical order, and sessions that read ranges of keys through an
// index, so that every key read is a single-block read of a different
// block through the database's buffer cache. Its headline is physical
// reads per second; the report divides them by the CPU cores that did
// them, since reads through a buffer cache cost CPU first. It follows the
// method as its published descriptions give it; no code or text of SLOB
// or pgio is used.
package blockio

import (
	"context"
	"embed"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
)

//go:embed sql
var sqlFiles embed.FS

// Name is the workload's name on the command line.
const Name = "block-io"

// layout is the schema's version, stored in dbrig_blockio at build time.
const layout = 1

// defaultSeed makes two builds without --seed identical.
const defaultSeed = 20150408

func init() {
	workload.Register(Name, func() workload.Workload {
		return &blockio{
			scale: "64MB", schemas: 1, loaders: runtime.NumCPU(), seed: defaultSeed,
			workUnit: 64, redo: redoLite, hotspotSize: "8MB",
		}
	})
}

var (
	_ workload.Builder        = (*blockio)(nil)
	_ workload.BuildEstimator = (*blockio)(nil)
	_ workload.Dropper        = (*blockio)(nil)
	_ workload.Checker        = (*blockio)(nil)
	_ workload.Exampler       = (*blockio)(nil)
	_ workload.RunChecker     = (*blockio)(nil)
	_ workload.Rater          = (*runner)(nil)
)

// Redo stresses: how many columns an update changes.
const (
	redoLite  = "lite"
	redoHeavy = "heavy"
)

// blockio holds the options its flags bind to.
type blockio struct {
	// build
	scale   string
	schemas int
	loaders int
	seed    uint64
	// run
	mode        string
	workUnit    int
	updatePct   int
	redo        string
	hotspot     int
	hotspotSize string
	think       string
}

func (w *blockio) Name() string { return Name }

// Metric keys.
const (
	metricPhysical = "physical_reads_per_s"
	metricLogical  = "logical_reads_per_s"
	metricOps      = "ops_per_s"
)

func (w *blockio) Info() workload.Info {
	return workload.Info{
		Metrics: []workload.Metric{
			{Key: metricPhysical, Label: "physical reads/s", Unit: "cache misses/s", HigherIsBetter: true},
			{Key: metricLogical, Label: "logical reads/s", Unit: "blocks/s", HigherIsBetter: true},
			{Key: metricOps, Label: "operations/s", Unit: "range reads and updates/s", HigherIsBetter: true},
		},
		Primary:   metricPhysical,
		PrimaryTx: txNames[txRead],
	}
}

func (w *blockio) BuildFlags(fs *pflag.FlagSet) {
	fs.StringVar(&w.scale, "scale", w.scale, "rows per table, which is blocks: a count (32768) or a size (64MB, 8GB)")
	fs.IntVar(&w.schemas, "schemas", w.schemas, "tables, each SCALE blocks; virtual user i reads table i mod SCHEMAS")
	fs.IntVar(&w.loaders, "loaders", w.loaders, "parallel loaders (PostgreSQL and MariaDB; SQLite has one writer)")
	fs.Uint64Var(&w.seed, "seed", w.seed, "seed of the rows' physical order; the same seed builds the same tables")
}

func (w *blockio) RunFlags(fs *pflag.FlagSet) {
	fs.StringVar(&w.mode, "mode", "", `"procs" (one stored-function call per operation), "sql" (client statements), or "loop" (each session loops inside the database, as SLOB and pgio do: the client costs next to nothing, and operations have no latencies; PostgreSQL and MariaDB); default procs where the database has stored routines`)
	fs.IntVar(&w.workUnit, "work-unit", w.workUnit, "keys, and so blocks, each operation reads or updates")
	fs.IntVar(&w.updatePct, "update-pct", w.updatePct, "share of operations that update, exact over each hundred (0-100)")
	fs.StringVar(&w.redo, "redo", w.redo, `what an update writes: "lite" (two columns) or "heavy" (all nine)`)
	fs.IntVar(&w.hotspot, "hotspot", w.hotspot, "every Nth operation reads the hot region instead (0: none)")
	fs.StringVar(&w.hotspotSize, "hotspot-size", w.hotspotSize, "size of the hot region, the first keys of each table")
	fs.StringVar(&w.think, "think", w.think, "think time between operations, uniform in MIN,MAX (such as 10ms,50ms)")
}

// Examples are the run command's examples.
func (w *blockio) Examples() []string {
	return []string{
		"dbrig run block-io",
		"dbrig build block-io --target postgres://bench@localhost/bench --scale 256MB",
		"dbrig run block-io --target postgres://bench@localhost/bench --vus 4 --update-pct 0",
		"dbrig run block-io --target postgres://bench@localhost/bench --vus 16 --update-pct 20 --redo heavy --mode sql",
		"dbrig run block-io --target postgres://bench@localhost/bench --vus 8 --mode loop",
	}
}

// sqlFor loads one of the SQL files, as the target's dialect has it.
func sqlFor(t dbtarget.Target, file string) (workload.SQLFile, error) {
	return workload.LoadSQL(sqlFiles, "sql", t.Dialect(), file)
}

// tableName is the name of table i, counted from 1.
func tableName(i int) string { return fmt.Sprintf("blockio%d", i) }

// forTable is a statement of the SQL files for one table.
func forTable(stmt, table string) string { return strings.ReplaceAll(stmt, "{table}", table) }

// meta is what the build recorded.
type meta struct {
	schemas, blockSize int
	scale              int64
	seed               uint64
	// pages is how a table lay on disk when the build verified it.
	pages pages
}

// record is where the build records itself.
var record = workload.Record{Name: Name, Table: "dbrig_blockio", Layout: layout}

// readMeta reads what the build recorded in dbrig_blockio, and checks it
// has all its tables.
func readMeta(ctx context.Context, t dbtarget.Target, s dbtarget.Session, q workload.SQLFile) (meta, error) {
	var m meta
	var seed int64
	err := record.Read(ctx, t, s, q,
		&m.scale, &m.schemas, &seed, &m.blockSize, &m.pages.blocks, &m.pages.indexPages)
	m.seed, m.pages.rows = uint64(seed), m.scale
	if err != nil {
		return m, err
	}
	present, err := workload.Present(ctx, s, q)
	if err != nil {
		return m, err
	}
	if tables := len(present) - 1; tables != m.schemas {
		return m, exitcode.Userf("the %s schema on %s should have %d tables and has %d: rebuild with `dbrig build %s --target %s --force`", Name, t.URL(), m.schemas, tables, Name, t.URL())
	}
	return m, nil
}

// Drop removes every blockio table, however many a build made, and the
// record of the build, once dbrig's build record shows they are all its
// own.
func (w *blockio) Drop(ctx context.Context, t dbtarget.Target) error {
	q, err := sqlFor(t, "schema.sql")
	if err != nil {
		return err
	}
	return record.Drop(ctx, t, q, func(s dbtarget.Session) error {
		present, err := workload.Present(ctx, s, q)
		if err != nil {
			return err
		}
		for _, name := range present {
			if name == record.Table {
				continue
			}
			for _, stmt := range q.Statements("drop_table") {
				if _, err := s.Exec(ctx, forTable(stmt, name)); err != nil {
					return err
				}
			}
		}
		_, err = s.Exec(ctx, q.Get("drop_meta"))
		return err
	})
}

// Check verifies what the method rests on: every table has SCALE rows,
// each in a block of its own, and no row overflowed.
func (w *blockio) Check(ctx context.Context, t dbtarget.Target, out io.Writer) (bool, error) {
	b, err := workload.OpenBuilt(ctx, t, sqlFiles, readMeta)
	if err != nil {
		return false, err
	}
	defer b.Close()
	s, q, m := b.S, b.Schema, b.Meta
	if _, ok := q["pages"]; !ok {
		good := m.pages.onePerBlock(m.scale) == nil
		fmt.Fprintf(out, "%s  each table, as the build measured it: %s\n", passFail(good), m.pages)
		return good, nil
	}
	ok := true
	for i := 1; i <= m.schemas; i++ {
		good, how, err := checkTable(ctx, s, q, tableName(i), m.scale)
		if err != nil {
			return false, err
		}
		ok = ok && good
		fmt.Fprintf(out, "%s  %s: %s\n", passFail(good), tableName(i), how)
	}
	return ok, nil
}

// checkTable says whether table holds scale rows, each in a block of its
// own, and how it lies. Updates can leave a table more blocks than rows:
// where pruning falls behind on a hot page, a row's new version goes to a
// new block at the table's end (fillfactor keeps it alone there), and the
// block it left stays, empty. The method still holds, since reads by key
// touch the rows' blocks only, so where the dialect can say which rows
// share a block ("shared_rows"), such a table passes when none do.
func checkTable(ctx context.Context, s dbtarget.Session, q workload.SQLFile, table string, scale int64) (bool, string, error) {
	p, err := readPages(ctx, s, q, table)
	if err != nil {
		return false, "", err
	}
	why := p.onePerBlock(scale)
	stmt, known := q["shared_rows"]
	if why == nil || !known || !p.grown(scale) {
		return why == nil, p.String(), nil
	}
	var shared int64
	if err := s.QueryRow(ctx, forTable(stmt, table)).Scan(&shared); err != nil {
		return false, "", fmt.Errorf("count the rows of %s that share a block: %w", table, err)
	}
	if shared > 0 {
		return false, fmt.Sprintf("%s; %d rows share a block with another", p, shared), nil
	}
	return true, fmt.Sprintf("%s; each row alone in its block, %d blocks empty (left by updates: a rebuild, or VACUUM FULL, gives them back)",
		p, p.blocks-p.rows), nil
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// pages is how a table lies on disk.
type pages struct {
	blocks, rows, indexPages, overflow int64
}

// readPages counts table's pages, with its statistics renewed first where
// the dialect counts pages from them.
func readPages(ctx context.Context, s dbtarget.Session, q workload.SQLFile, table string) (pages, error) {
	var p pages
	if err := stats(ctx, s, q, table); err != nil {
		return p, err
	}
	err := s.QueryRow(ctx, forTable(q.Get("pages"), table)).Scan(&p.blocks, &p.rows, &p.indexPages, &p.overflow)
	if err != nil {
		return p, fmt.Errorf("count the pages of %s: %w", table, err)
	}
	return p, nil
}

func (p pages) String() string {
	return fmt.Sprintf("%d rows in %d blocks, %d overflow pages; index of %d pages", p.rows, p.blocks, p.overflow, p.indexPages)
}

// grown is whether p fails onePerBlock only by having more blocks than
// its rows need.
func (p pages) grown(scale int64) bool {
	return p.rows == scale && p.overflow == 0 && p.blocks > p.mostBlocks()
}

// mostBlocks is the most blocks p's rows, one per block, may take.
func (p pages) mostBlocks() int64 { return p.rows + p.rows/20 + 2 }

// onePerBlock says why p is not scale rows, one per block, if it is not.
// A table may count the pages of its own tree's upper levels among its
// blocks (SQLite's rowid tree: a few per thousand rows), so blocks may
// exceed rows a little; two rows to a block would make them half the rows,
// and a row that overflowed twice.
func (p pages) onePerBlock(scale int64) error {
	switch {
	case p.rows != scale:
		return fmt.Errorf("%d rows, not the %d built", p.rows, scale)
	case p.blocks < p.rows || p.blocks > p.mostBlocks():
		return fmt.Errorf("%d rows in %d blocks, not one row per block", p.rows, p.blocks)
	case p.overflow != 0:
		return fmt.Errorf("%d overflow pages: rows spill out of their block", p.overflow)
	}
	return nil
}
