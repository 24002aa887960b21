package tprocc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	"github.com/dbrig/dbrig/internal/dbtarget/postgres"
	"github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/server/servertest"
	"github.com/dbrig/dbrig/internal/workload"
)

// noSession is a target whose sessions are nil: enough for generating
// inputs, which never touches the database.
type noSession struct{ dbtarget.Target }

func (noSession) Session(context.Context) (dbtarget.Session, error) { return nil, nil }

func txSQLFile(t testing.TB, d dbtarget.Dialect) workload.SQLFile {
	t.Helper()
	f, err := workload.LoadSQL(sqlFiles, "sql", d, "tx.sql")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func testConfig(t testing.TB, warehouses int) *runConfig {
	return &runConfig{
		Warehouses: warehouses, Mode: workload.ModeProcs, Seed: 42,
		C: cRun{Last: 123, ID: 259, ItemID: 7911}, Q: txSQLFile(t, postgres.Dialect),
	}
}

func testVU(t testing.TB, cfg *runConfig, id int) *vu {
	t.Helper()
	v, err := newVU(context.Background(), noSession{}, cfg, id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// share is part/whole in percent.
func sharePct(part, whole int) float64 { return float64(part) / float64(whole) * 100 }

func TestDeckProportions(t *testing.T) {
	for _, id := range []int{0, 1, 17} {
		v := testVU(t, testConfig(t, 4), id)
		var first [100]int
		for deck := range 5 {
			var n [5]int
			var order [100]int
			for i := range 100 {
				tx := v.Next()
				n[tx]++
				order[i] = tx
			}
			if want := [5]int{45, 43, 4, 4, 4}; n != want {
				t.Errorf("vu %d, deck %d: %v transactions per type, want %v", id, deck, n, want)
			}
			if deck == 0 {
				first = order
			} else if order == first {
				t.Errorf("vu %d: deck %d dealt in the same order as deck 0", id, deck)
			}
		}
	}
}

func TestHomeAndStockLevelDistrict(t *testing.T) {
	cfg := testConfig(t, 3)
	for _, c := range []struct{ id, home, d int }{
		{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 1, 2}, {5, 3, 2}, {29, 3, 10}, {30, 1, 1},
	} {
		v := testVU(t, cfg, c.id)
		if v.home != c.home || v.slevD != c.d {
			t.Errorf("vu %d: home %d, stock-level district %d; want %d, %d", c.id, v.home, v.slevD, c.home, c.d)
		}
		for range 50 {
			v.genStockLevel(&v.terminal)
			if v.sl.w != c.home || v.sl.d != c.d {
				t.Fatalf("vu %d: stock-level on %d/%d, want %d/%d", c.id, v.sl.w, v.sl.d, c.home, c.d)
			}
		}
	}
}

func TestSameSeedSameInputs(t *testing.T) {
	cfg := testConfig(t, 5)
	a, b, c := testVU(t, cfg, 3), testVU(t, cfg, 3), testVU(t, cfg, 4)
	same, differ := true, false
	for range 500 {
		ta, tb, tc := draw(a), draw(b), draw(c)
		if ta != tb || ta == txNewOrder && !slices.Equal(a.no.lines, b.no.lines) ||
			ta == txPayment && a.pay != b.pay {
			same = false
		}
		if ta != tc {
			differ = true
		}
	}
	if !same {
		t.Error("two virtual users with the same seed and id drew different inputs")
	}
	if !differ {
		t.Error("virtual users 3 and 4 drew the same transactions")
	}
}

func TestNewOrderInputs(t *testing.T) {
	const n = 200000
	for _, warehouses := range []int{1, 4} {
		cfg := testConfig(t, warehouses)
		v := testVU(t, cfg, 1)
		var rollbacks, lines, remote int
		for range n {
			v.genNewOrder(&v.terminal)
			in := &v.no
			if in.w != v.home || in.d < 1 || in.d > 10 || in.c < 1 || in.c > 3000 {
				t.Fatalf("w %d d %d c %d out of range", in.w, in.d, in.c)
			}
			if len(in.lines) < 5 || len(in.lines) > 15 {
				t.Fatalf("%d order lines", len(in.lines))
			}
			if in.rollback {
				rollbacks++
			}
			nRemote := 0
			for i, l := range in.lines {
				last := i == len(in.lines)-1
				switch {
				case last && in.rollback:
					if l.item != unusedItem {
						t.Fatalf("rolled-back order's last item is %d", l.item)
					}
				case l.item < 1 || l.item > items:
					t.Fatalf("item %d out of range", l.item)
				}
				if l.qty < 1 || l.qty > 10 {
					t.Fatalf("quantity %d", l.qty)
				}
				if l.supplyW < 1 || l.supplyW > warehouses {
					t.Fatalf("supply warehouse %d of %d", l.supplyW, warehouses)
				}
				if l.supplyW != in.w {
					nRemote++
				}
				if i > 0 && (l.item < in.lines[i-1].item || l.item == in.lines[i-1].item && l.supplyW < in.lines[i-1].supplyW) {
					t.Fatalf("lines not in stock-row order: %v", in.lines)
				}
				if int(in.items[i]) != l.item || int(in.supplyW[i]) != l.supplyW || int(in.qty[i]) != l.qty {
					t.Fatalf("routine arrays %v %v %v differ from lines %v", in.items, in.supplyW, in.qty, in.lines)
				}
			}
			if nRemote != in.remote {
				t.Fatalf("remote count %d, lines say %d", in.remote, nRemote)
			}
			if len(in.items) != len(in.lines) {
				t.Fatalf("%d routine items for %d lines", len(in.items), len(in.lines))
			}
			lines += len(in.lines)
			remote += in.remote
		}
		if p := sharePct(rollbacks, n); p < 0.85 || p > 1.15 {
			t.Errorf("%d warehouses: %.2f%% rollbacks, want about 1%%", warehouses, p)
		}
		p := sharePct(remote, lines)
		switch {
		case warehouses == 1 && remote != 0:
			t.Errorf("one warehouse: %d remote order lines", remote)
		case warehouses > 1 && (p < 0.9 || p > 1.1):
			t.Errorf("%d warehouses: %.2f%% remote order lines, want about 1%%", warehouses, p)
		}
		if avg := float64(lines) / n; math.Abs(avg-10) > 0.05 {
			t.Errorf("%.2f lines per order, want about 10", avg)
		}
	}
}

func TestPaymentInputs(t *testing.T) {
	const n = 100000
	names := map[string]bool{}
	for i := range 1000 {
		names[lastName(i)] = true
	}
	for _, warehouses := range []int{1, 3} {
		v := testVU(t, testConfig(t, warehouses), 2)
		var remote, byName int
		for range n {
			v.genPayment(&v.terminal)
			in := &v.pay
			if in.w != v.home || in.d < 1 || in.d > 10 || in.cd < 1 || in.cd > 10 || in.cw < 1 || in.cw > warehouses {
				t.Fatalf("payment %+v out of range", *in)
			}
			if in.cw != in.w {
				remote++
			} else if in.cd != in.d {
				t.Fatalf("home customer in district %d of a payment to district %d", in.cd, in.d)
			}
			if in.byName {
				byName++
				if !names[in.last] || in.c != 0 {
					t.Fatalf("by name %q (c_id %d)", in.last, in.c)
				}
			} else if in.c < 1 || in.c > 3000 || in.last != "" {
				t.Fatalf("by id %d (name %q)", in.c, in.last)
			}
			if in.amount < 1 || in.amount > 5000 || math.Abs(math.Round(in.amount*100)-in.amount*100) > 1e-6 {
				t.Fatalf("amount %v", in.amount)
			}
		}
		p := sharePct(remote, n)
		switch {
		case warehouses == 1 && remote != 0:
			t.Errorf("one warehouse: %d remote payments", remote)
		case warehouses > 1 && (p < 14.5 || p > 15.5):
			t.Errorf("%.2f%% remote payments, want about 15%%", p)
		}
		if p := sharePct(byName, n); p < 59 || p > 61 {
			t.Errorf("%.2f%% payments by last name, want about 60%%", p)
		}
	}
}

func TestOrderStatusDeliveryStockLevelInputs(t *testing.T) {
	const n = 100000
	v := testVU(t, testConfig(t, 2), 0)
	byName := 0
	for range n {
		v.genOrderStatus(&v.terminal)
		if v.os.w != 1 || v.os.d < 1 || v.os.d > 10 {
			t.Fatalf("order-status %+v", v.os)
		}
		if v.os.byName {
			byName++
		} else if v.os.c < 1 || v.os.c > 3000 {
			t.Fatalf("order-status customer %d", v.os.c)
		}
		v.genDelivery(&v.terminal)
		if v.dl.w != 1 || v.dl.carrier < 1 || v.dl.carrier > 10 {
			t.Fatalf("delivery %+v", v.dl)
		}
		v.genStockLevel(&v.terminal)
		if v.sl.threshold < 10 || v.sl.threshold > 20 {
			t.Fatalf("stock-level threshold %d", v.sl.threshold)
		}
	}
	if p := sharePct(byName, n); p < 59 || p > 61 {
		t.Errorf("%.2f%% order-status by last name, want about 60%%", p)
	}
}

func TestAllWarehouses(t *testing.T) {
	cfg := testConfig(t, 5)
	cfg.AllWarehouses = true
	v := testVU(t, cfg, 0)
	seen := map[int]int{}
	for range 5000 {
		switch draw(v) {
		case txNewOrder:
			seen[v.no.w]++
		case txPayment:
			seen[v.pay.w]++
		case txStockLevel:
			if v.sl.d != v.slevD {
				t.Fatalf("stock-level district %d, want the virtual user's %d", v.sl.d, v.slevD)
			}
		}
	}
	for w := 1; w <= 5; w++ {
		if seen[w] < 600 {
			t.Errorf("warehouse %d chosen %d times of about 880", w, seen[w])
		}
	}
}

func TestPacing(t *testing.T) {
	cfg := testConfig(t, 1)
	if k, th := testVU(t, cfg, 0).Pacing(txNewOrder); k != 0 || th != 0 {
		t.Errorf("without keying and thinking: keying %v, think %v; want none", k, th)
	}
	cfg.Keying = true
	v := testVU(t, cfg, 0)
	wantKeying := []float64{18, 3, 2, 2, 2}
	wantMean := []float64{12, 12, 10, 5, 5}
	const n = 20000
	for tx := range txNames {
		var sum float64
		for range n {
			k, th := v.Pacing(tx)
			if k.Seconds() != wantKeying[tx] {
				t.Fatalf("%s: keying %v", txNames[tx], k)
			}
			if th < 0 || th.Seconds() > 10*wantMean[tx] {
				t.Fatalf("%s: think time %v beyond 10 times the mean", txNames[tx], th)
			}
			sum += th.Seconds()
		}
		if mean := sum / n; math.Abs(mean-wantMean[tx])/wantMean[tx] > 0.05 {
			t.Errorf("%s: mean think time %.2fs, want %vs", txNames[tx], mean, wantMean[tx])
		}
	}
}

// Every dialect's tx.sql resolves every block a virtual user takes
// (loadTxSQL panics otherwise), the routine calls only where there are
// routines; procs.sql defines the routines the calls name; and a write:
// block belongs to a step, or it would never run.
func TestTxSQLBlocks(t *testing.T) {
	lite := txSQLFile(t, sqlite.Dialect)
	loadTxSQL(lite, false)
	if calls := lite.Named("call:"); len(calls) > 0 {
		t.Errorf("sqlite has routine calls %v", calls)
	}
	for _, d := range []dbtarget.Dialect{postgres.Dialect, mariadb.Dialect} {
		f := txSQLFile(t, d)
		q := loadTxSQL(f, true)
		steps := map[string]bool{}
		for _, st := range []step{q.noDistrict, q.noStock, q.noStocks, q.dlOrders, q.dlOrderLines, q.payWarehouse, q.payDistrict, q.payCustomer, q.dlNewOrder, q.dlOrder, q.dlLines} {
			steps[st.write] = true
		}
		for _, name := range f.Named("write:") {
			if !steps[f[name]] {
				t.Errorf("%s: block %s is no step's write", d.Name, name)
			}
		}
		procs, err := workload.LoadSQL(sqlFiles, "sql", d, "procs.sql")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"tprocc_neword", "tprocc_payment", "tprocc_ostat", "tprocc_delivery", "tprocc_slev"} {
			create := regexp.MustCompile(`^CREATE (OR REPLACE )?(FUNCTION|PROCEDURE) ` + name + `\(`)
			if !create.MatchString(procs.Get("proc:" + name)) {
				t.Errorf("%s: proc:%s does not create %s", d.Name, name, name)
			}
			found := false
			for k, q := range f {
				if strings.HasPrefix(k, "call:") && strings.Contains(q, name+"(") {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no call: block calls %s", d.Name, name)
			}
		}
	}
}

// The transactions against a freshly built warehouse: each type runs
// without error, the tallies add up, and the consistency conditions still
// hold afterwards.
func TestTransactionsSQLite(t *testing.T) {
	testTransactions(t, onSQLite, workload.ModeSQL)
}

func TestTransactionsPostgresSQL(t *testing.T) {
	testTransactions(t, onPostgres, workload.ModeSQL)
}

func TestTransactionsPostgresProcs(t *testing.T) {
	testTransactions(t, onPostgres, workload.ModeProcs)
}

func testTransactions(t *testing.T, src source, mode string) {
	if testing.Short() {
		t.Skip("builds a warehouse")
	}
	ctx := context.Background()
	w, tg := buildOn(t, src, 2)
	cfg := &runConfig{Warehouses: 2, Mode: mode, Seed: 7, C: runConstants(7, loadConstant(defaultSeed)), Q: txSQLFile(t, tg.Dialect())}

	// Each virtual user runs its inputs until every type has run enough,
	// forcing some types so the rare ones are covered.
	const per = 30
	v, err := newVU(ctx, tg, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	tally := make(driver.Tally, len(tallyNames))
	var ran [5]int
	rollbacks := 0
	for tx := range txNames {
		for ran[tx] < per {
			txImpl[tx].gen(v.session, &v.terminal)
			// One rollback on purpose, the rest as they come.
			if tx == txNewOrder && ran[tx] == 0 {
				forceRollback(v)
			}
			err := v.Run(ctx, tx, tally)
			switch {
			case errors.Is(err, driver.ErrRollback):
				if tx != txNewOrder || !v.no.rollback {
					t.Fatalf("%s: unexpected rollback", txNames[tx])
				}
				rollbacks++
			case err != nil:
				t.Fatalf("%s: %v", txNames[tx], err)
			case tx == txNewOrder && v.no.rollback:
				t.Fatalf("new_order with the unused item committed")
			}
			ran[tx]++
		}
	}
	// The deck, with a second user sharing the first's home warehouse.
	v2, err := newVU(ctx, tg, cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	for range 100 {
		tx := v2.Next()
		if err := v2.Run(ctx, tx, tally); err != nil && !errors.Is(err, driver.ErrRollback) {
			t.Fatalf("%s: %v", txNames[tx], err)
		}
		if tx == txNewOrder && v2.no.rollback {
			rollbacks++
		}
	}
	if tally[tRollbacks] != int64(rollbacks) || tally[tNewOrders] != per+45 {
		t.Errorf("tally %v: want %d new orders, %d rollbacks", tally, per+45, rollbacks)
	}
	if tally[tPayments] != per+43 || tally[tCustomerSelects] != 2*per+43+4 {
		t.Errorf("tally %v: want %d payments and %d customer selections", tally, per+43, 2*per+47)
	}
	if v.dl.delivered != 10 {
		t.Errorf("last delivery delivered %d districts, want 10", v.dl.delivered)
	}
	// A retried Run repeats the inputs its first attempt drew, and draws
	// nothing more from the terminal's stream.
	for range 20 {
		tx := v2.Next()
		var drawn string
		var stream workload.Rand
		for attempt := range 2 {
			if err := v2.Run(ctx, tx, tally); err != nil && !errors.Is(err, driver.ErrRollback) {
				t.Fatalf("%s: %v", txNames[tx], err)
			}
			in := fmt.Sprint(inputsOf(v2.session, tx)...)
			if attempt == 0 {
				drawn, stream = in, v2.r
			} else if in != drawn || v2.r.Uint64() != stream.Uint64() {
				t.Fatalf("%s retried with %s, first run with %s", txNames[tx], in, drawn)
			}
		}
	}

	// Virtual users sharing warehouses at once: retryable errors are
	// retried as the driver would, any other error fails.
	const vus, each = 6, 150
	var wg sync.WaitGroup
	var retries atomic.Int64
	errs := make(chan error, vus)
	for id := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := newVU(ctx, tg, cfg, 10+id)
			if err != nil {
				errs <- err
				return
			}
			defer v.Close()
			tally := make(driver.Tally, len(tallyNames))
			for range each {
				tx := v.Next()
				for {
					err := v.Run(ctx, tx, tally)
					if err != nil && !errors.Is(err, driver.ErrRollback) && tg.Classify(err) == dbtarget.ErrRetry {
						retries.Add(1)
						continue
					}
					if err != nil && !errors.Is(err, driver.ErrRollback) {
						errs <- fmt.Errorf("vu %d: %s: %w", id, txNames[tx], err)
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%s %s: %d concurrent transactions, %d retried", tg.Kind(), mode, vus*each, retries.Load())

	var out bytes.Buffer
	ok, err := w.Check(ctx, tg, &out)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if !ok {
		t.Errorf("consistency check failed after the transactions:\n%s", out.String())
	}
}

// source gives a test a database holding warehouses warehouses of
// tproc-c, built from the default seed, and its URL.
type source func(t *testing.T, warehouses int) string

// onPostgres is a database of the shared PostgreSQL, a copy of one built
// once for the test binary (pgtest.NewBuiltDB).
func onPostgres(t *testing.T, warehouses int) string {
	t.Helper()
	return pgtest.NewBuiltDB(t, fmt.Sprintf("tprocc_%d", warehouses), func(url string) { buildAt(t, url, warehouses) })
}

// onSQLite is an SQLite file of the test's own, a copy of one built once
// for the test binary (servertest.BuiltFile).
func onSQLite(t *testing.T, warehouses int) string {
	t.Helper()
	return "sqlite:" + servertest.BuiltFile(t, fmt.Sprintf("tprocc-%d", warehouses), "tprocc.db", func(path string) {
		buildAt(t, "sqlite:"+path, warehouses)
	})
}

// onMariaDB is a database of the shared MariaDB, built for the test:
// MariaDB has no template databases.
func onMariaDB(t *testing.T, warehouses int) string {
	t.Helper()
	url := mariatest.NewDB(t)
	buildAt(t, url, warehouses)
	return url
}

// buildAt builds warehouses warehouses at url from the default seed.
func buildAt(t *testing.T, url string, warehouses int) {
	t.Helper()
	tg, err := dbtarget.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	w := &tprocc{warehouses: warehouses, loaders: 2, seed: defaultSeed, perWarehouse: terminalsPerWarehouse}
	sum, err := w.Build(context.Background(), tg, workload.BuildOptions{})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	// Every build times its steps, in order, and says so in its last note,
	// which bench/tprocc reads.
	var names []string
	for _, p := range sum.Phases {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "tables load keys routines analyze record" {
		t.Errorf("the build's phases: %q", got)
	}
	if n := len(sum.Notes); n == 0 || !strings.HasPrefix(sum.Notes[n-1], "Phases: tables ") {
		t.Errorf("the build's notes %q end in no phases", sum.Notes)
	}
}

// buildOn is a database src gives, holding warehouses warehouses, opened
// for the test (closed when it ends), and the workload as built there.
func buildOn(t *testing.T, src source, warehouses int) (*tprocc, dbtarget.Target) {
	t.Helper()
	return openBuilt(t, src(t, warehouses), warehouses)
}

// openBuilt opens url, where warehouses warehouses were built from the
// default seed; the target is closed when the test ends.
func openBuilt(t *testing.T, url string, warehouses int) (*tprocc, dbtarget.Target) {
	t.Helper()
	tg, err := dbtarget.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return &tprocc{warehouses: warehouses, loaders: 2, seed: defaultSeed, perWarehouse: terminalsPerWarehouse}, tg
}

// forceRollback makes the New-Order just generated ask for the unused item.
func forceRollback(v *vu) {
	in := &v.no
	in.rollback = true
	last := len(in.lines) - 1
	in.lines[last].item = unusedItem
	in.lists()
}
