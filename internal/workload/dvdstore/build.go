package dvdstore

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
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
	return workload.Estimate(float64(s.Orders()+s.Customers/4) / buildRate)
}

// Build creates the tables, loads them in parallel, adds keys and
// statistics, and records what it built.
func (w *dvdstore) Build(ctx context.Context, t dbtarget.Target, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	sc, err := parseScale(w.size)
	if err != nil {
		return sum, err
	}
	if err := workload.CheckLoaders(w.loaders); err != nil {
		return sum, err
	}
	fresh := workload.Fresh{Name: Name, Force: opt.Force, Drop: w.Drop, FS: sqlFiles}
	sum, err = fresh.Build(ctx, t, func(s dbtarget.Session, q workload.SQLFile) (string, error) {
		m, err := readMeta(ctx, t, s, q)
		return fmt.Sprintf("a %s schema of %d customers", Name, m.scale.Customers), err
	}, func(s dbtarget.Session, q workload.SQLFile) (workload.BuildSummary, error) {
		return workload.Tables{Name: Name, FS: sqlFiles, Loaders: w.loaders, Jobs: loadJobs(w.seed, sc),
			Record: []any{layout, sc.Customers, sc.Products, sc.OrdersPerMonth, int64(w.seed)}, Progress: opt.Progress}.Build(ctx, t, s, q)
	})
	if err == nil {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d customers, %d products, %d orders dated %d.", sc.Customers, sc.Products, sc.Orders(), dataYear))
	}
	return sum, err
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
	return workload.LoadJob{Table: table, Columns: columns, Rows: to - from + 1, Source: func() dbtarget.RowSource {
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
	return workload.LoadJob{Table: table, Columns: columns, Rows: (to - from + 1) * 5, Source: func() dbtarget.RowSource {
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
	jobs = append(jobs, workload.LoadJob{Table: "ds_inventory", Columns: inventoryColums, Rows: sc.Products, Source: func() dbtarget.RowSource {
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
