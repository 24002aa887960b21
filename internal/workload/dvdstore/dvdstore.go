// Package dvdstore is an online DVD store's order entry, after Dell's DVD
// Store (DS2): customers log in or register, browse products by category,
// actor and title, and buy; every table and generation rule follows the
// facts its documentation and data give, and none of its code (GPL) is
// used. Its words, names and addresses are made here.
package dvdstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/dbrig/dbrig/internal/target"
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
	fs.IntVar(&w.loaders, "loaders", w.loaders, "parallel loaders (PostgreSQL; SQLite has one writer)")
	fs.Uint64Var(&w.seed, "seed", w.seed, "seed for data generation; the same seed builds the same data")
}

// sqlFor loads one of the SQL files, as the target's dialect has it.
func sqlFor(t target.Target, file string) (workload.SQLFile, error) {
	return workload.LoadSQL(sqlFiles, "sql", t.Dialect(), file)
}

// meta is what the build recorded.
type meta struct {
	layout int
	scale  scale
	seed   uint64
}

// readMeta reads dbrig_dvdstore, telling a missing schema (ErrNoSchema)
// from one that is there but not dbrig's, or not this layout's.
func readMeta(ctx context.Context, t target.Target, s target.Session, q workload.SQLFile) (meta, error) {
	var m meta
	var tables, metaTables int
	if err := s.QueryRow(ctx, q.Get("exists")).Scan(&tables, &metaTables); err != nil {
		return m, fmt.Errorf("look for the %s tables: %w", Name, err)
	}
	rebuild := fmt.Sprintf("rebuild with `dbrig build %s --target %s --force`", Name, t.URL())
	switch {
	case tables == 0:
		return m, workload.ErrNoSchema
	case metaTables == 0:
		return m, target.Userf("found %s tables that dbrig did not build (no dbrig_dvdstore table): drop them, or %s", Name, rebuild)
	}
	var seed int64
	err := s.QueryRow(ctx, q.Get("meta_read")).Scan(&m.layout, &m.scale.Customers, &m.scale.Products, &m.scale.OrdersPerMonth, &seed)
	m.seed = uint64(seed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return m, target.Userf("the %s schema on %s was never finished (dbrig_dvdstore is empty): %s", Name, t.URL(), rebuild)
	case err != nil:
		return m, target.Userf("read dbrig_dvdstore on %s: %v", t.URL(), err)
	case m.layout != layout:
		return m, target.Userf("the %s schema was built with layout %d; this dbrig uses layout %d: %s", Name, m.layout, layout, rebuild)
	}
	return m, nil
}

func (w *dvdstore) Drop(ctx context.Context, t target.Target) error {
	q, err := sqlFor(t, "schema.sql")
	if err != nil {
		return err
	}
	s, err := t.Session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, stmt := range q.Statements("drop") {
		if _, err := s.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("drop: %w", err)
		}
	}
	return nil
}

// Check runs the conditions that hold after a build and after any run.
func (w *dvdstore) Check(ctx context.Context, t target.Target, out io.Writer) (bool, error) {
	q, err := sqlFor(t, "schema.sql")
	if err != nil {
		return false, err
	}
	conds, err := sqlFor(t, "check.sql")
	if err != nil {
		return false, err
	}
	s, err := t.Session(ctx)
	if err != nil {
		return false, err
	}
	defer s.Close()
	if _, err := readMeta(ctx, t, s, q); err != nil {
		return false, err
	}
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
