package dvdstore

import (
	"context"
	"math"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
)

// expectedSales recomputes every category's sales in w from the
// generator alone: the report's query must give the same.
func expectedSales(seed uint64, s scale, w window) [17][3]float64 {
	var out [17][3]float64
	v := make([]any, len(productColumns))
	cat := make([]int64, s.Products+1)
	price := make([]float64, s.Products+1)
	for id := int64(1); id <= s.Products; id++ {
		product(seed, id, s.Products, v)
		cat[id], price[id] = v[1].(int64), v[4].(float64)
	}
	var o order
	for id := int64(1); id <= s.Orders(); id++ {
		genOrder(seed, s, id, &o)
		if o.Date.Before(w.half) || o.Date.After(w.anchor) {
			continue
		}
		for i := range o.Lines {
			amount := float64(o.Quantity[i]) * price[o.Products[i]]
			c := &out[cat[o.Products[i]]]
			c[2] += amount
			if !o.Date.Before(w.quarter) {
				c[1] += amount
			}
			if !o.Date.Before(w.month) {
				c[0] += amount
			}
		}
	}
	return out
}

func testReports(t *testing.T, url string, modes ...string) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	w := &reports{dvdstore: newDVDStore()}
	w.size = "2MB"
	if _, err := w.Build(ctx, tg, workload.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, _ := parseScale(w.size)
	for _, mode := range modes {
		w.mode = mode
		r, err := w.Open(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		run := r.(*reportRun)
		want := expectedSales(w.seed, sc, run.win)
		vu, err := run.NewVU(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		v := vu.(*reportVU)
		for c := 1; c <= len(categories); c++ {
			v.cat = c
			if err := v.Run(ctx, 0, make(driver.Tally, len(reportTallies))); err != nil {
				t.Fatalf("%s: category %d: %v", mode, c, err)
			}
			for k, name := range []string{"month", "quarter", "half-year"} {
				if math.Abs(v.sales[k]-want[c][k]) > 0.005 {
					t.Errorf("%s: category %d %s: report %.2f, recomputed %.2f", mode, c, name, v.sales[k], want[c][k])
				}
			}
		}
		if want[1][2] <= want[1][1] || want[1][1] <= want[1][0] || want[1][0] <= 0 {
			t.Errorf("category 1's sales %v: want month < quarter < half-year", want[1])
		}
		v.Close()
		r.Close()
	}
}

func TestReportsSQLite(t *testing.T) { testReports(t, "sqlite:"+t.TempDir()+"/d.db", "") }

func TestReportsPostgres(t *testing.T) {
	testReports(t, pgtest.NewDB(t), workload.ModeProcs, workload.ModeSQL)
}
