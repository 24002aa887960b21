// Package dvdstore is an online DVD store's order entry, after Dell's DVD
// Store (DS2): customers log in or register, browse products by category,
// actor and title, and buy; every table and generation rule follows the
// facts its documentation and data give, and none of its code (GPL) is
// used. Its words, names and addresses are made here.
package dvdstore

import (
	"context"
	"embed"
	"fmt"
	"io"
	"runtime"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
)

//go:embed sql
var sqlFiles embed.FS

// Name is the workload's name on the command line.
const Name = "dvd-store"

// layout is the schema's version, stored in dbrig_dvdstore at build time.
const layout = 1

// defaultSeed makes two builds without --seed identical.
const defaultSeed = 20040301

// dvdstore holds the options its flags bind to.
type dvdstore struct {
	size    string
	loaders int
	seed    uint64
	run     runOptions
}

func newDVDStore() *dvdstore {
	return &dvdstore{size: "S", loaders: runtime.NumCPU(), seed: defaultSeed,
		run: runOptions{pctNew: 20, searches: 3, batch: 5, lineItems: 5}}
}

func (w *dvdstore) BuildFlags(fs *pflag.FlagSet) {
	fs.StringVar(&w.size, "size", w.size, "S (20,000 customers, 10 MB), M (1 GB), L (100 GB), or a size such as 50MB or 2GB")
	fs.IntVar(&w.loaders, "loaders", w.loaders, "parallel loaders (PostgreSQL and MariaDB; SQLite has one writer)")
	fs.Uint64Var(&w.seed, "seed", w.seed, "seed for data generation; the same seed builds the same data")
}

// sqlFor loads one of the SQL files, as the target's dialect has it.
func sqlFor(t dbtarget.Target, file string) (workload.SQLFile, error) {
	return workload.LoadSQL(sqlFiles, "sql", t.Dialect(), file)
}

// meta is what the build recorded.
type meta struct {
	scale scale
	seed  uint64
}

// record is where the build records itself.
var record = workload.Record{Name: Name, Table: "dbrig_dvdstore", Layout: layout}

// readMeta reads what the build recorded in dbrig_dvdstore.
func readMeta(ctx context.Context, t dbtarget.Target, s dbtarget.Session, q workload.SQLFile) (meta, error) {
	var m meta
	var seed int64
	err := record.Read(ctx, t, s, q,
		&m.scale.Customers, &m.scale.Products, &m.scale.OrdersPerMonth, &seed)
	m.seed = uint64(seed)
	return m, err
}

func (w *dvdstore) Drop(ctx context.Context, t dbtarget.Target) error {
	q, err := sqlFor(t, "schema.sql")
	if err != nil {
		return err
	}
	return record.Drop(ctx, t, q, nil)
}

// openBuilt loads the statements of file and opens a session on t's
// build, for a check.
func openBuilt(ctx context.Context, t dbtarget.Target, file string) (workload.SQLFile, *workload.Built[meta], error) {
	q, err := sqlFor(t, file)
	if err != nil {
		return q, nil, err
	}
	b, err := workload.OpenBuilt(ctx, t, sqlFiles, readMeta)
	return q, b, err
}

// Check runs the conditions that hold after a build and after any run.
func (w *dvdstore) Check(ctx context.Context, t dbtarget.Target, out io.Writer) (bool, error) {
	conds, b, err := openBuilt(ctx, t, "check.sql")
	if err != nil {
		return false, err
	}
	defer b.Close()
	s := b.S
	ok := true
	for _, name := range conds.Named("cond:") {
		var bad int64
		if err := s.QueryRow(ctx, conds.Get(name)).Scan(&bad); err != nil {
			return false, fmt.Errorf("%s: %w", name[len("cond:"):], err)
		}
		result := "PASS"
		if bad != 0 {
			result, ok = "FAIL", false
		}
		fmt.Fprintf(out, "%s  %s (%d off)\n", result, name[len("cond:"):], bad)
	}
	return ok, nil
}
