package dvdstore

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	_ "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	runpkg "github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
)

func TestParseScale(t *testing.T) {
	for _, c := range []struct {
		in   string
		want scale
	}{
		{"S", small}, {"m", medium}, {"L", large},
		{"10MB", small}, {"50MB", scale{100_000, 50_000, 5_000}},
		{"1GB", medium}, {"2GB", scale{4_000_000, 20_000, 200_000}},
	} {
		got, err := parseScale(c.in)
		if err != nil || got != c.want {
			t.Errorf("parseScale(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"XL", "0MB", "-5MB", "1KB"} {
		var ue *exitcode.UserError
		if _, err := parseScale(bad); !errors.As(err, &ue) {
			t.Errorf("parseScale(%q): %v, want a user error", bad, err)
		}
	}
}

// Orders follow the rules: dated in the data's year, in their own month,
// 1 to 9 lines of 1 to 3, amounts in range; and the same id makes the
// same order, whichever loader asks.
func TestGenOrder(t *testing.T) {
	var a, b order
	months := map[time.Month]int{}
	lines := map[int]int{}
	for id := int64(1); id <= small.Orders(); id++ {
		genOrder(7, small, id, &a)
		genOrder(7, small, id, &b)
		if a != b {
			t.Fatalf("order %d differs between two makings", id)
		}
		if a.Date.Year() != dataYear || int64(a.Date.Month()) != (id-1)/small.OrdersPerMonth+1 {
			t.Fatalf("order %d dated %s", id, a.Date)
		}
		if a.Net < 0.01 || a.Net > 400 || a.Customer < 1 || a.Customer > small.Customers {
			t.Fatalf("order %d: %+v", id, a)
		}
		for i := range a.Lines {
			if a.Quantity[i] < 1 || a.Quantity[i] > 3 || a.Products[i] < 1 || a.Products[i] > small.Products {
				t.Fatalf("order %d line %d: product %d quantity %d", id, i, a.Products[i], a.Quantity[i])
			}
		}
		months[a.Date.Month()]++
		lines[a.Lines]++
	}
	if len(months) != 12 || months[1] != 1000 || len(lines) != 9 {
		t.Errorf("months %v, line counts %v: want 12 months of 1,000 and all of 1-9 lines", months, lines)
	}
}

func TestTitlesUnique(t *testing.T) {
	seen := map[string]bool{}
	for i := int64(0); i < 1_000_000; i += 997 {
		if seen[title(i)] {
			t.Fatalf("title %q repeats", title(i))
		}
		seen[title(i)] = true
	}
}

// lifecycle builds size S on url, checks it, runs order entry in each
// mode, checks it again and drops it.
func lifecycle(t *testing.T, url string, modes ...string) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	w := newDVDStore()
	w.loaders = 2
	if _, err := w.Build(ctx, tg, workload.BuildOptions{}); err != nil {
		t.Fatalf("build: %v", err)
	}
	check(t, tg, w, "after the build")
	for _, mode := range modes {
		w.run.mode = mode
		orderEntry(t, tg, w)
	}
	check(t, tg, w, "after the runs")
	if err := w.Drop(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Open(ctx, tg); !errors.Is(err, workload.ErrNoSchema) {
		t.Errorf("open after drop: %v, want no schema", err)
	}
}

// orderEntry runs a few seconds of orders and checks every step ran, none
// failed, and the two sides' new orders.
func orderEntry(t *testing.T, tg dbtarget.Target, w *dvdstore) {
	ctx := context.Background()
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	o := runpkg.Defaults()
	o.VUs, o.Rampup, o.Duration = 3, time.Second, 4*time.Second
	d, err := runpkg.Run(ctx, tg, w, r, o)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]result.Tx{}
	for _, tx := range d.Transactions {
		steps[tx.Name] = tx
		if tx.Errors != 0 {
			t.Errorf("%s: %d errors: %s", tx.Name, tx.Errors, tx.ErrorSample)
		}
	}
	for _, s := range stepNames {
		if steps[s].Count == 0 {
			t.Errorf("no %s step ran", s)
		}
	}
	opm, _ := d.Metric(metricOPM)
	newOPM, _ := d.Metric(metricNewOPM)
	rb, _ := d.Metric(metricRollback)
	if opm.Client == nil || newOPM.DB == nil || rb.Client == nil {
		t.Fatalf("%s: orders/min %v, new orders/min (database) %v, rollbacks %v: want all three", w.run.mode, opm.Client, newOPM.DB, rb.Client)
	}
	// The database counts the orders committed in the window, the client
	// those that returned in it, rolled back or not: an order whose
	// commit fell just inside the window's end but whose answer came
	// after it, one per virtual user at most, the database counts and the
	// client does not.
	edge := float64(o.VUs) * 60 / d.WindowSeconds
	if *opm.Client <= 0 || *newOPM.DB > *opm.Client+edge || *rb.Client >= 10 {
		t.Errorf("%s: orders/min %.1f, new orders/min (database) %.1f (at most %.1f more, its edge), rollbacks %.2f%%",
			w.run.mode, *opm.Client, *newOPM.DB, edge, *rb.Client)
	}
}

func check(t *testing.T, tg dbtarget.Target, w *dvdstore, when string) {
	t.Helper()
	var out bytes.Buffer
	ok, err := w.Check(context.Background(), tg, &out)
	if err != nil || !ok || strings.Count(out.String(), "PASS") != 9 {
		t.Fatalf("check %s: %v, %v:\n%s", when, ok, err, out.String())
	}
}

func TestLifecycleSQLite(t *testing.T) { lifecycle(t, "sqlite:"+t.TempDir()+"/d.db", "") }

func TestLifecyclePostgres(t *testing.T) {
	lifecycle(t, pgtest.NewDB(t), workload.ModeProcs, workload.ModeSQL)
}

// The check finds what breaks its conditions.
func TestCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, "sqlite:"+t.TempDir()+"/d.db")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	w := newDVDStore()
	w.size = "2MB"
	if _, err := w.Build(ctx, tg, workload.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, stmt := range []string{
		"UPDATE ds_inventory SET quan_in_stock = -1 WHERE prod_id = 1",
		"DELETE FROM ds_cust_hist WHERE rowid = 1",
		"UPDATE ds_inventory SET sales = sales + 1 WHERE prod_id = 2",
		"INSERT INTO ds_orderlines VALUES (1, 999999, 1, 1, '2013-01-01')",
	} {
		if _, err := s.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	ok, err := w.Check(ctx, tg, &out)
	if err != nil || ok {
		t.Fatalf("check of a damaged schema: %v, %v", ok, err)
	}
	for _, want := range []string{"FAIL  inventory never negative", "FAIL  cust_hist matches orderlines",
		"FAIL  sales are the quantities ordered", "FAIL  every orderline belongs to an order"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, out.String())
		}
	}
}
