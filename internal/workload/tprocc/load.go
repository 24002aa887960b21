package tprocc

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
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
func (w *tprocc) Build(ctx context.Context, t dbtarget.Target, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	if w.warehouses < 1 {
		return sum, exitcode.Userf("--warehouses must be at least 1, got %d", w.warehouses)
	}
	if w.loaders < 1 {
		return sum, exitcode.Userf("--loaders must be at least 1, got %d", w.loaders)
	}
	fresh := workload.Fresh{Name: Name, Force: opt.Force, Drop: w.Drop, FS: sqlFiles}
	return fresh.Build(ctx, t, func(s dbtarget.Session, q workload.SQLFile) (string, error) {
		m, err := readMeta(ctx, t, s, q)
		return fmt.Sprintf("a %s schema with %d warehouses", Name, m.warehouses), err
	}, func(s dbtarget.Session, q workload.SQLFile) (workload.BuildSummary, error) {
		g := genConfig{Seed: w.seed, CLoad: loadConstant(w.seed), Now: time.Now().UTC().Truncate(time.Microsecond)}
		return workload.Tables{Name: Name, FS: sqlFiles, Loaders: w.loaders, Jobs: loadJobs(g, w.warehouses),
			Record: []any{layout, w.warehouses, int64(w.seed), g.CLoad}, Progress: opt.Progress}.Build(ctx, t, s, q)
	})
}

// loadConstant is the load-time NURand C for C_LAST, fixed by the seed so
// that a run can pick a run-time C that satisfies clause 2.1.6.1.
func loadConstant(seed uint64) int {
	return workload.NewRand(seed, 0xC1A5).Int(0, 255)
}
