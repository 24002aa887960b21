package tprocc

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
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
	if err := w.checkBuild(); err != nil {
		return sum, err
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

// warehouseBytes is about what a warehouse of a build takes in dbrig
// before anything is loaded: its eight load jobs listed, and their state
// in the load's pipeline. An allowance: the list alone is about 1 KB.
const warehouseBytes = 4 << 10

// checkBuild refuses build flags the schema or this machine cannot take,
// before anything is made.
func (w *tprocc) checkBuild() error {
	switch {
	case w.warehouses < 1:
		return exitcode.Userf("--warehouses must be at least 1, got %d", w.warehouses)
	case w.warehouses > math.MaxInt32:
		return exitcode.Userf("--warehouses %d is more than the schema's warehouse ids, 32-bit integers, can number: at most %s", w.warehouses, human.Thousands(math.MaxInt32))
	}
	if err := workload.CheckMemory(fmt.Sprintf("--warehouses %d", w.warehouses), w.warehouses, warehouseBytes, "warehouses' load jobs"); err != nil {
		return err
	}
	return workload.CheckLoaders(w.loaders)
}

// loadConstant is the load-time NURand C for C_LAST, fixed by the seed so
// that a run can pick a run-time C that satisfies clause 2.1.6.1.
func loadConstant(seed uint64) int {
	return workload.NewRand(seed, 0xC1A5).Int(0, 255)
}
