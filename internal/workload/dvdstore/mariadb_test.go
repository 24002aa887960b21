package dvdstore

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	_ "github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/workload"
)

// The order entry, the reports and their kept answers on MariaDB, as on
// the other targets: its client statements read the stock FOR UPDATE and
// take it apart (no UPDATE ... RETURNING), its procedures commit and roll
// back by themselves, and its money is DECIMAL, so the reports' totals
// and check --result's recomputation agree to the cent.
func TestLifecycleMariaDB(t *testing.T) {
	lifecycle(t, mariatest.NewDB(t), workload.ModeProcs, workload.ModeSQL)
}

func TestReportsMariaDB(t *testing.T) {
	testReports(t, mariatest.NewDB(t), workload.ModeProcs, workload.ModeSQL)
}

func TestAnswersMariaDB(t *testing.T) { testAnswers(t, mariatest.NewDB(t)) }

func TestStepsMariaDB(t *testing.T) {
	testSteps(t, mariatest.NewDB(t), workload.ModeProcs, workload.ModeSQL)
}

func TestPooledMariaDB(t *testing.T) {
	r, tg := openSmall(t, mariatest.NewDB(t), uint64(time.Now().UnixNano()), 0)
	pooledRun(t, r, tg)
}

// TestPurchaseErrorRollsBackMariaDB: a lock wait timeout undoes only the
// statement that waited, so a procedure that let it through would leave
// the order and the stock it took before in an open transaction, for the
// session's next purchase to commit. The purchase waits here on its
// second product, which another session holds: the error must reach the
// client as one to retry, with nothing of the purchase left and no
// transaction open; with the product free, the same call goes through.
func TestPurchaseErrorRollsBackMariaDB(t *testing.T) {
	ctx := context.Background()
	r, tg := openSmall(t, mariatest.NewDB(t), 1, 0)
	holder, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	cfg := r.cfg
	cfg.mode = workload.ModeProcs
	buyer, err := openSession(ctx, tg, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer buyer.Close()
	state := func() (orders, stock int64) {
		t.Helper()
		if err := holder.QueryRow(ctx, "SELECT (SELECT count(*) FROM ds_orders), (SELECT sum(quan_in_stock) FROM ds_inventory)").Scan(&orders, &stock); err != nil {
			t.Fatal(err)
		}
		return orders, stock
	}
	// Products 1 to 3 have stock enough for one of each, whatever the seed.
	for _, q := range []string{"UPDATE ds_inventory SET quan_in_stock = 100 WHERE prod_id <= 3",
		"START TRANSACTION", "SELECT quan_in_stock FROM ds_inventory WHERE prod_id = 2 FOR UPDATE"} {
		if _, err := holder.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	orders, stock := state()
	if _, err := buyer.S.Exec(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	buyer.cart = []item{{prod: 1, qty: 1}, {prod: 2, qty: 1}, {prod: 3, qty: 1}}
	tally := make(driver.Tally, len(tallyNames))
	err = buyer.purchaseCall(ctx, 1, tally, 10, 0.83)
	if err == nil || tg.Classify(err) != dbtarget.ErrRetry {
		t.Fatalf("purchase of a held product: %v (class %v), want a lock wait timeout to retry", err, tg.Classify(err))
	}
	var open int
	if err := buyer.S.QueryRow(ctx, "SELECT @@in_transaction").Scan(&open); err != nil || open != 0 {
		t.Errorf("after the error the session is in a transaction: %d, %v", open, err)
	}
	if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if o, s := state(); o != orders || s != stock {
		t.Errorf("after the failed purchase: %d orders and %d in stock, %d and %d before", o, s, orders, stock)
	}
	if err := buyer.purchaseCall(ctx, 1, tally, 10, 0.83); err != nil || tally[tOrders] != 1 {
		t.Fatalf("purchase of free products: %v, tally %v", err, tally)
	}
	if o, s := state(); o != orders+1 || s != stock-3 {
		t.Errorf("after the purchase: %d orders and %d in stock, want %d and %d", o, s, orders+1, stock-3)
	}
}
