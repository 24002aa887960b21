package tprocc

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/target"
	"github.com/dbrig/dbrig/internal/workload"
)

// genConfig fixes everything generation depends on: the same config gives
// the same rows, whichever loader makes them and in whatever order.
type genConfig struct {
	Seed  uint64
	CLoad int       // NURand C for C_LAST at load time (clause 2.1.6)
	Now   time.Time // the population date/time (c_since, o_entry_d, ...)
}

// Build creates the schema, loads it with parallel loaders, adds keys,
// routines and statistics, and records what it built. A build that fails
// part-way drops what it made, so no half-built schema is left behind.
func (w *tprocc) Build(ctx context.Context, t target.Target, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	if w.warehouses < 1 {
		return sum, target.Userf("--warehouses must be at least 1, got %d", w.warehouses)
	}
	if w.loaders < 1 {
		return sum, target.Userf("--loaders must be at least 1, got %d", w.loaders)
	}
	q, err := sqlFor(t, "schema.sql")
	if err != nil {
		return sum, err
	}
	s, err := t.Session(ctx)
	if err != nil {
		return sum, err
	}
	defer s.Close()
	m, err := readMeta(ctx, t, s, q)
	fresh := workload.Fresh{Name: Name, Force: opt.Force, Found: err, Drop: w.Drop,
		Have: fmt.Sprintf("a %s schema with %d warehouses", Name, m.warehouses)}
	return fresh.Build(ctx, t, func() (workload.BuildSummary, error) { return w.build(ctx, t, s, q, opt) })
}

func (w *tprocc) build(ctx context.Context, t target.Target, s target.Session, q workload.SQLFile, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	progress := opt.Progress
	if progress == nil {
		progress = func(int64, int64, string) {}
	}
	for _, stmt := range q.Statements("tables") {
		if _, err := s.Exec(ctx, stmt); err != nil {
			return sum, fmt.Errorf("create tables: %w", err)
		}
	}
	g := genConfig{Seed: w.seed, CLoad: loadConstant(w.seed), Now: time.Now().UTC().Truncate(time.Microsecond)}
	rows, err := workload.Load(ctx, t, w.loaders, loadJobs(g, w.warehouses), "loading", progress)
	sum.Rows = rows
	if err != nil {
		return sum, err
	}
	progress(rows, rows, "keys")
	var ddl []workload.Task
	for _, stmt := range q.Statements("keys") {
		ddl = append(ddl, workload.Exec(stmt))
	}
	loaders := w.loaders
	if !t.ParallelWrites() {
		loaders = 1
	}
	if err := workload.Parallel(ctx, t, loaders, ddl); err != nil {
		return sum, fmt.Errorf("keys: %w", err)
	}
	if t.HasRoutines() {
		procs, err := sqlFor(t, "procs.sql")
		if err != nil {
			return sum, err
		}
		for _, name := range procs.Named("proc:") {
			if _, err := s.Exec(ctx, procs.Get(name)); err != nil {
				return sum, fmt.Errorf("create %s: %w", name, err)
			}
		}
	}
	progress(rows, rows, "analyze")
	if _, err := s.Exec(ctx, q.Get("analyze")); err != nil {
		return sum, fmt.Errorf("analyze: %w", err)
	}
	if _, err := s.Exec(ctx, q.Get("meta_write"), layout, w.warehouses, int64(w.seed), g.CLoad); err != nil {
		return sum, fmt.Errorf("record build: %w", err)
	}
	if err := s.QueryRow(ctx, q.Get("size")).Scan(&sum.Bytes); err != nil {
		return sum, fmt.Errorf("size: %w", err)
	}
	return sum, nil
}

// loadConstant is the load-time NURand C for C_LAST, fixed by the seed so
// that a run can pick a run-time C that satisfies clause 2.1.6.1.
func loadConstant(seed uint64) int {
	return workload.NewRand(seed, 0xC1A5).Int(0, 255)
}
