package tprocc

import (
	"context"
	"io"
	"runtime"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
)

func init() {
	// The defaults are set here, not only by the flags, because a run on the
	// default target builds without ever seeing the build flags.
	workload.Register(Name, func() workload.Workload {
		return &tprocc{warehouses: 1, loaders: runtime.NumCPU(), seed: defaultSeed, perWarehouse: terminalsPerWarehouse}
	})
}

// What tproc-c offers beyond the required interface.
var (
	_ workload.Builder        = (*tprocc)(nil)
	_ workload.BuildEstimator = (*tprocc)(nil)
	_ workload.Dropper        = (*tprocc)(nil)
	_ workload.Checker        = (*tprocc)(nil)
	_ workload.RunChecker     = (*tprocc)(nil)
	_ workload.Rater          = (*runner)(nil)
	_ driver.Pacer            = (*vu)(nil)
)

// defaultSeed makes two builds without --seed identical.
const defaultSeed = 20040601

// tprocc holds the options flags bind to.
type tprocc struct {
	warehouses    int
	loaders       int
	seed          uint64
	mode          string
	allWarehouses bool
	keying        bool
	perWarehouse  int // terminals a warehouse a keyed run may have
}

func (w *tprocc) Name() string { return Name }

// Metric keys.
const (
	metricNOPM = "nopm"
	metricTPM  = "tpm"
)

func (w *tprocc) Info() workload.Info {
	return workload.Info{
		Metrics: []workload.Metric{
			{Key: metricNOPM, Label: "NOPM", Unit: "New-Orders per minute", HigherIsBetter: true},
			{Key: metricTPM, Label: "TPM", Unit: "transactions per minute", HigherIsBetter: true},
		},
		Primary:   metricNOPM,
		PrimaryTx: txNames[txNewOrder],
	}
}

// buildPerWarehouse is about how long a build takes per warehouse, with
// keys and statistics, on a small server: for a sweep's plan.
const buildPerWarehouse = 15 * time.Second

func (w *tprocc) BuildTime() time.Duration {
	return workload.Estimate(float64(w.warehouses) * buildPerWarehouse.Seconds())
}

func (w *tprocc) BuildFlags(fs *pflag.FlagSet) {
	fs.IntVar(&w.warehouses, "warehouses", w.warehouses, "warehouses to build (about 100 MB each)")
	fs.IntVar(&w.loaders, "loaders", w.loaders, "parallel loaders (PostgreSQL and MariaDB; SQLite has one writer)")
	fs.Uint64Var(&w.seed, "seed", w.seed, "seed for data generation; the same seed builds the same data")
}

func (w *tprocc) RunFlags(fs *pflag.FlagSet) {
	fs.StringVar(&w.mode, "mode", "", `"procs" (one stored-function call per transaction) or "sql" (client-side statements); default procs where the database has stored routines`)
	fs.BoolVar(&w.allWarehouses, "all-warehouses", false, "spread each virtual user over all warehouses instead of one home warehouse")
	fs.BoolVar(&w.keying, "keying-thinking", false, "apply the specification's keying and think times")
	fs.IntVar(&w.perWarehouse, "terminals-per-warehouse", terminalsPerWarehouse, "keyed virtual users a warehouse may have; other than 10 is a scale test, not the specification's shape, and its efficiency is per terminal")
}

// sqlFor loads one of the SQL files, as the target's dialect has it.
func sqlFor(t dbtarget.Target, file string) (workload.SQLFile, error) {
	return workload.LoadSQL(sqlFiles, "sql", t.Dialect(), file)
}

// meta is what the build recorded.
type meta struct {
	warehouses int
	seed       uint64
	cLoad      int
}

// record is where the build records itself.
var record = workload.Record{Name: Name, Table: "dbrig_tprocc", Layout: layout}

// readMeta reads what the build recorded in dbrig_tprocc.
func readMeta(ctx context.Context, t dbtarget.Target, s dbtarget.Session, q workload.SQLFile) (meta, error) {
	var m meta
	var seed int64
	err := record.Read(ctx, t, s, q, &m.warehouses, &seed, &m.cLoad)
	m.seed = uint64(seed)
	return m, err
}

func (w *tprocc) Drop(ctx context.Context, t dbtarget.Target) error {
	q, err := sqlFor(t, "schema.sql")
	if err != nil {
		return err
	}
	return record.Drop(ctx, t, q, nil)
}

func (w *tprocc) Check(ctx context.Context, t dbtarget.Target, out io.Writer) (bool, error) {
	b, err := workload.OpenBuilt(ctx, t, sqlFiles, readMeta)
	if err != nil {
		return false, err
	}
	b.Close()
	return check(ctx, t, b.Meta.warehouses, out)
}
