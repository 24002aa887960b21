package blockio

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
)

// loadChunk is the rows one load job writes: small enough that the
// loaders share a table's load evenly.
const loadChunk = 16384

// buildRate is about how many bytes of table a build writes a second, with
// its index, on a small server: for a sweep's plan.
const buildRate = 40 << 20

// BuildTime is the plan's estimate, taking 8 KB blocks.
func (w *blockio) BuildTime() time.Duration {
	blocks, err := parseScale(w.scale, 8192)
	if err != nil {
		return 0
	}
	return workload.Estimate(float64(blocks) * 8192 * float64(w.schemas) / buildRate)
}

// schemaBytes is about what a table takes in dbrig, at a build and a
// run: its statements, its load jobs and their state. An allowance.
const schemaBytes = 16 << 10

// Build creates the tables, loads them in parallel, adds their indexes
// (and functions, where the database has them), verifies that every row
// has a block to itself, and records what it built. A build that fails
// part-way drops what it made.
func (w *blockio) Build(ctx context.Context, t dbtarget.Target, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	if w.schemas < 1 {
		return sum, exitcode.Userf("--schemas must be at least 1, got %d", w.schemas)
	}
	if err := workload.CheckMemory(fmt.Sprintf("--schemas %d", w.schemas), w.schemas, schemaBytes, "tables' statements and load jobs"); err != nil {
		return sum, err
	}
	if err := workload.CheckLoaders(w.loaders); err != nil {
		return sum, err
	}
	fresh := workload.Fresh{Name: Name, Force: opt.Force, Drop: w.Drop, FS: sqlFiles}
	return fresh.Build(ctx, t, func(s dbtarget.Session, q workload.SQLFile) (string, error) {
		m, err := readMeta(ctx, t, s, q)
		return fmt.Sprintf("a %s schema of %d tables of %d blocks", Name, m.schemas, m.scale), err
	}, func(s dbtarget.Session, q workload.SQLFile) (workload.BuildSummary, error) {
		return w.build(ctx, t, s, q, opt)
	})
}

func (w *blockio) build(ctx context.Context, t dbtarget.Target, s dbtarget.Session, q workload.SQLFile, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	progress := opt.Progress
	if progress == nil {
		progress = func(int64, int64, string) {}
	}
	var blockSize, width int
	if err := s.QueryRow(ctx, q.Get("geometry")).Scan(&blockSize, &width); err != nil {
		return sum, fmt.Errorf("read the block size: %w", err)
	}
	scale, err := parseScale(w.scale, blockSize)
	if err != nil {
		return sum, exitcode.Userf("%v", err)
	}
	if scale < minScale {
		return sum, exitcode.Userf("--scale %s is %d blocks of %d bytes; the least is %d", w.scale, scale, blockSize, minScale)
	}
	if err := workload.Make(ctx, t, s, Name, q.Get("meta")); err != nil {
		return sum, fmt.Errorf("create dbrig_blockio: %w", err)
	}
	jobs, err := w.tables(ctx, t, s, q, scale, width)
	if err != nil {
		return sum, err
	}
	grew := fileGrowth(ctx, s, q)
	rows, err := workload.Load(ctx, t, w.loaders, jobs, "loading", progress)
	sum.Rows = rows
	if err != nil {
		return sum, err
	}
	tablePages, err := grew()
	if err != nil {
		return sum, err
	}
	progress(rows, rows, "indexes")
	if err := w.eachTable(ctx, t, execs(q, "key")); err != nil {
		return sum, fmt.Errorf("index: %w", err)
	}
	indexPages, err := grew()
	if err != nil {
		return sum, err
	}
	if err := createProcs(ctx, t, s, w.schemas, "proc:"); err != nil {
		return sum, err
	}
	progress(rows, rows, "analyze")
	err = w.eachTable(ctx, t, func(ctx context.Context, s dbtarget.Session, table string) error {
		if err := execs(q, "analyze")(ctx, s, table); err != nil {
			return err
		}
		return stats(ctx, s, q, table)
	})
	if err != nil {
		return sum, fmt.Errorf("analyze: %w", err)
	}
	first, err := w.verify(ctx, s, q, scale, pages{blocks: tablePages / int64(w.schemas), indexPages: indexPages / int64(w.schemas)})
	if err != nil {
		return sum, err
	}
	sum.Notes = append(sum.Notes, fmt.Sprintf("Verified one row per %d-byte block in every table: %s.", blockSize, first))
	if _, err := s.Exec(ctx, q.Get("meta_write"), layout, scale, w.schemas, int64(w.seed), blockSize, first.blocks, first.indexPages); err != nil {
		return sum, fmt.Errorf("record build: %w", err)
	}
	if err := s.QueryRow(ctx, q.Get("size")).Scan(&sum.Bytes); err != nil {
		return sum, fmt.Errorf("size: %w", err)
	}
	return sum, nil
}

// tables creates the tables, each width bytes a row, and returns the jobs
// that load them, scale rows each.
func (w *blockio) tables(ctx context.Context, t dbtarget.Target, s dbtarget.Session, q workload.SQLFile, scale int64, width int) ([]workload.LoadJob, error) {
	ddl := strings.ReplaceAll(q.Get("table"), "{width}", strconv.Itoa(width))
	filler := strings.Repeat("x", width)
	var jobs []workload.LoadJob
	for i := 1; i <= w.schemas; i++ {
		name := tableName(i)
		if err := workload.Make(ctx, t, s, Name, forTable(ddl, name)); err != nil {
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
		p := newPerm(uint64(scale), tableSeed(w.seed, i))
		for from := int64(0); from < scale; from += loadChunk {
			to := min(from+loadChunk, scale)
			jobs = append(jobs, workload.LoadJob{Table: name, Columns: columns, Rows: to - from,
				Source: func() dbtarget.RowSource { return newRows(p, from, to, filler) }})
		}
	}
	return jobs, nil
}

// eachTable runs do for every table, on a session of its own, the tables
// in parallel where the target writes so.
func (w *blockio) eachTable(ctx context.Context, t dbtarget.Target, do func(ctx context.Context, s dbtarget.Session, table string) error) error {
	var tasks []workload.Task
	for i := 1; i <= w.schemas; i++ {
		tasks = append(tasks, func(ctx context.Context, s dbtarget.Session) error { return do(ctx, s, tableName(i)) })
	}
	return workload.Parallel(ctx, t, loadersFor(t, w.loaders), tasks)
}

// execs runs the statements of q's block name, if q has it, on table.
func execs(q workload.SQLFile, name string) func(ctx context.Context, s dbtarget.Session, table string) error {
	return func(ctx context.Context, s dbtarget.Session, table string) error {
		if _, ok := q[name]; !ok {
			return nil
		}
		for _, stmt := range q.Statements(name) {
			if _, err := s.Exec(ctx, forTable(stmt, table)); err != nil {
				return err
			}
		}
		return nil
	}
}

// stats renews table's statistics where the dialect's "stats" block does
// so with statements whose replies are rows (MariaDB's ANALYZE TABLE):
// they are read and dropped, as go-sql-driver's Exec of a prepared
// statement that returns rows waited forever on MariaDB 10.11.
func stats(ctx context.Context, s dbtarget.Session, q workload.SQLFile, table string) error {
	if _, ok := q["stats"]; !ok {
		return nil
	}
	for _, stmt := range q.Statements("stats") {
		rows, err := s.Query(ctx, forTable(stmt, table))
		if err != nil {
			return fmt.Errorf("statistics of %s: %w", table, err)
		}
		for rows.Next() {
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("statistics of %s: %w", table, err)
		}
	}
	return nil
}

// verify measures every table, which must hold each of its scale rows in
// a block of its own, and returns the first's pages; guess is what the
// data files grew by per table, for a dialect that cannot measure one.
func (w *blockio) verify(ctx context.Context, s dbtarget.Session, q workload.SQLFile, scale int64, guess pages) (pages, error) {
	first := guess
	for i := 1; i <= w.schemas; i++ {
		p, err := measuredPages(ctx, s, q, tableName(i), first)
		if err != nil {
			return first, err
		}
		if err := p.onePerBlock(scale); err != nil {
			return first, fmt.Errorf("%s: %w", tableName(i), err)
		}
		if i == 1 {
			first = p
		}
	}
	return first, nil
}

// loadersFor is how many sessions may write at once.
func loadersFor(t dbtarget.Target, n int) int {
	if !t.ParallelWrites() {
		return 1
	}
	return n
}

// createProcs makes each table's routines of procs.sql whose names start
// with prefix, where the database has them.
func createProcs(ctx context.Context, t dbtarget.Target, s dbtarget.Session, schemas int, prefix string) error {
	if !t.HasRoutines() {
		return nil
	}
	procs, err := sqlFor(t, "procs.sql")
	if err != nil {
		return err
	}
	for i := 1; i <= schemas; i++ {
		for _, name := range procs.Named(prefix) {
			if _, err := s.Exec(ctx, forTable(procs.Get(name), tableName(i))); err != nil {
				return fmt.Errorf("create %s for %s: %w", name, tableName(i), err)
			}
		}
	}
	return nil
}

// fileGrowth returns what measures, for a dialect that counts no pages per
// table, how many pages the file grew since the last call (or this one);
// it measures nothing, and returns 0, where the dialect counts them.
func fileGrowth(ctx context.Context, s dbtarget.Session, q workload.SQLFile) func() (int64, error) {
	stmt, ok := q["file_pages"]
	if !ok {
		return func() (int64, error) { return 0, nil }
	}
	var last int64
	read := func() (int64, error) {
		var n int64
		if err := s.QueryRow(ctx, stmt).Scan(&n); err != nil {
			return 0, fmt.Errorf("count the file's pages: %w", err)
		}
		grew := n - last
		last = n
		return grew, nil
	}
	_, err := read()
	return func() (int64, error) {
		if err != nil {
			return 0, err
		}
		return read()
	}
}

// measuredPages is how table lies on disk: counted per table where the
// dialect can, else the build's measure of the file's growth (grown) with
// the table's rows counted.
func measuredPages(ctx context.Context, s dbtarget.Session, q workload.SQLFile, table string, grown pages) (pages, error) {
	if _, ok := q["pages"]; ok {
		return readPages(ctx, s, q, table)
	}
	if err := s.QueryRow(ctx, forTable(q.Get("rows"), table)).Scan(&grown.rows); err != nil {
		return grown, fmt.Errorf("count the rows of %s: %w", table, err)
	}
	return grown, nil
}
