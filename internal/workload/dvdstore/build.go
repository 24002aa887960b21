package dvdstore

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/target"
	"github.com/dbrig/dbrig/internal/workload"
)

// chunk is the rows (customers, products) or orders one load job makes.
const chunk = 50_000

// buildRate is about how many orders' worth of data (with their
// customers and products) a small server loads a second, with keys.
const buildRate = 40_000

func (w *dvdstore) BuildTime() time.Duration {
	s, err := parseScale(w.size)
	if err != nil {
		return 0
	}
	return time.Duration(float64(s.Orders()+s.Customers/4) / buildRate * float64(time.Second))
}

// Build creates the tables, loads them in parallel, adds keys and
// statistics, and records what it built.
func (w *dvdstore) Build(ctx context.Context, t target.Target, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	sc, err := parseScale(w.size)
	if err != nil {
		return sum, err
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
		Have: fmt.Sprintf("a %s schema of %d customers", Name, m.scale.Customers)}
	return fresh.Build(ctx, t, func() (workload.BuildSummary, error) { return w.build(ctx, t, s, q, sc, opt) })
}

func (w *dvdstore) build(ctx context.Context, t target.Target, s target.Session, q workload.SQLFile, sc scale, opt workload.BuildOptions) (workload.BuildSummary, error) {
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
	rows, err := workload.Load(ctx, t, w.loaders, loadJobs(w.seed, sc), "loading", progress)
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
	if _, ok := q["sequences"]; ok {
		for _, stmt := range q.Statements("sequences") {
			if _, err := s.Exec(ctx, stmt); err != nil {
				return sum, fmt.Errorf("sequences: %w", err)
			}
		}
	}
	progress(rows, rows, "analyze")
	if _, err := s.Exec(ctx, q.Get("analyze")); err != nil {
		return sum, fmt.Errorf("analyze: %w", err)
	}
	if _, err := s.Exec(ctx, q.Get("meta_write"), layout, sc.Customers, sc.Products, sc.OrdersPerMonth, int64(w.seed)); err != nil {
		return sum, fmt.Errorf("record build: %w", err)
	}
	if err := s.QueryRow(ctx, q.Get("size")).Scan(&sum.Bytes); err != nil {
		return sum, fmt.Errorf("size: %w", err)
	}
	sum.Notes = append(sum.Notes, fmt.Sprintf("%d customers, %d products, %d orders dated %d.", sc.Customers, sc.Products, sc.Orders(), dataYear))
	return sum, nil
}

// ranges splits 1..n into load jobs of at most chunk each.
func ranges(n int64, job func(from, to int64) workload.LoadJob) []workload.LoadJob {
	var out []workload.LoadJob
	for from := int64(1); from <= n; from += chunk {
		out = append(out, job(from, min(from+chunk-1, n)))
	}
	return out
}

// rowJob is a job of one row per id in [from, to], made by fill.
func rowJob(table string, columns []string, from, to int64, fill func(id int64, v []any)) workload.LoadJob {
	return workload.LoadJob{Table: table, Columns: columns, Rows: to - from + 1, Source: func() target.RowSource {
		id := from - 1
		return workload.RowFunc(len(columns), func(v []any) bool {
			if id++; id > to {
				return false
			}
			fill(id, v)
			return true
		})
	}}
}

// lineJob is a job of the rows each order in [from, to] has one of per
// line: its orderlines, or its cust_hist rows.
func lineJob(seed uint64, sc scale, table string, columns []string, from, to int64, fill func(o *order, line int, v []any)) workload.LoadJob {
	return workload.LoadJob{Table: table, Columns: columns, Rows: (to - from + 1) * 5, Source: func() target.RowSource {
		var o order
		id, line := from-1, 0
		return workload.RowFunc(len(columns), func(v []any) bool {
			for id < from || line >= o.Lines {
				if id++; id > to {
					return false
				}
				genOrder(seed, sc, id, &o)
				line = 0
			}
			fill(&o, line, v)
			line++
			return true
		})
	}}
}

// loadJobs are the whole build's rows: the big tables first, so that the
// loaders finish together.
func loadJobs(seed uint64, sc scale) []workload.LoadJob {
	var jobs []workload.LoadJob
	jobs = append(jobs, ranges(sc.Orders(), func(from, to int64) workload.LoadJob {
		return lineJob(seed, sc, "ds_orderlines", lineColumns, from, to, func(o *order, i int, v []any) {
			v[0], v[1], v[2], v[3], v[4] = int64(i+1), o.ID, o.Products[i], o.Quantity[i], o.Date
		})
	})...)
	jobs = append(jobs, ranges(sc.Orders(), func(from, to int64) workload.LoadJob {
		return lineJob(seed, sc, "ds_cust_hist", histColumns, from, to, func(o *order, i int, v []any) {
			v[0], v[1], v[2] = o.Customer, o.ID, o.Products[i]
		})
	})...)
	jobs = append(jobs, ranges(sc.Orders(), func(from, to int64) workload.LoadJob {
		return rowJob("ds_orders", orderColumns, from, to, func(id int64, v []any) {
			var o order
			genOrder(seed, sc, id, &o)
			v[0], v[1], v[2], v[3], v[4], v[5] = o.ID, o.Date, o.Customer, o.Net, o.Tax, o.Total
		})
	})...)
	jobs = append(jobs, ranges(sc.Customers, func(from, to int64) workload.LoadJob {
		return rowJob("ds_customers", customerColumns, from, to, func(id int64, v []any) { customer(seed, id, sc.Customers, v) })
	})...)
	jobs = append(jobs, ranges(sc.Products, func(from, to int64) workload.LoadJob {
		return rowJob("ds_products", productColumns, from, to, func(id int64, v []any) { product(seed, id, sc.Products, v) })
	})...)
	// The inventory's sales add up the quantities of every loaded order:
	// one pass over them, made when the job starts.
	jobs = append(jobs, workload.LoadJob{Table: "ds_inventory", Columns: inventoryColums, Rows: sc.Products, Source: func() target.RowSource {
		sold := sales(seed, sc)
		id := int64(0)
		return workload.RowFunc(len(inventoryColums), func(v []any) bool {
			if id++; id > sc.Products {
				return false
			}
			v[0], v[1], v[2] = id, stock(seed, id), sold[id]
			return true
		})
	}})
	jobs = append(jobs, rowJob("ds_categories", []string{"category", "categoryname"}, 1, int64(len(categories)), func(id int64, v []any) {
		v[0], v[1] = id, categories[id-1]
	}))
	return jobs
}
