package tprocc

import (
	"context"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/workload"
)

// The transactions and the check on MariaDB, as on the other targets: its
// client statements split each step that PostgreSQL writes as UPDATE ...
// RETURNING, and its procedures commit and roll back by themselves.
func TestTransactionsMariaDBSQL(t *testing.T) {
	testTransactions(t, onMariaDB, workload.ModeSQL)
}

func TestTransactionsMariaDBProcs(t *testing.T) {
	testTransactions(t, onMariaDB, workload.ModeProcs)
}

func TestCheckMariaDB(t *testing.T) {
	testCheck(t, onMariaDB)
}

// TestProcErrorRollsBackMariaDB: a lock wait timeout undoes only the
// statement that waited, so a procedure that let it through would leave
// its earlier changes in an open transaction, for the session's next
// transaction to commit. Payment waits here on a district another session
// holds, after it has added to its warehouse's YTD: the error must reach
// the client with that addition undone and no transaction left open.
func TestProcErrorRollsBackMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a warehouse")
	}
	ctx := context.Background()
	_, tg := buildOn(t, onMariaDB, 1)
	holder, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	payer, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer payer.Close()
	ytd := func() (s string) {
		t.Helper()
		if err := holder.QueryRow(ctx, "SELECT w_ytd FROM warehouse WHERE w_id = 1").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := ytd()

	for _, q := range []string{"START TRANSACTION", "SELECT d_id FROM district WHERE d_w_id = 1 AND d_id = 3 FOR UPDATE"} {
		if _, err := holder.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := payer.Exec(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	tx := txSQLFile(t, tg.Dialect())
	var c int
	var balance float64
	err = payer.QueryRow(ctx, tx.Get("call:payment"), 1, 3, 1, 3, 42, false, "", 123.45, now()).Scan(&c, &balance)
	if err == nil || tg.Classify(err) != dbtarget.ErrRetry {
		t.Fatalf("payment on a held district: %v (class %v), want a lock wait timeout to retry", err, tg.Classify(err))
	}
	var open int
	if err := payer.QueryRow(ctx, "SELECT @@in_transaction").Scan(&open); err != nil || open != 0 {
		t.Errorf("after the error the session is in a transaction: %d, %v", open, err)
	}
	if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if after := ytd(); after != before {
		t.Errorf("w_ytd %s after the failed payment, %s before: the warehouse's update stayed", after, before)
	}

	// With the district free the same call goes through, so the failure
	// above was the lock's.
	if err := payer.QueryRow(ctx, tx.Get("call:payment"), 1, 3, 1, 3, 42, false, "", 123.45, now()).Scan(&c, &balance); err != nil || c != 42 {
		t.Fatalf("payment: customer %d, %v; want 42", c, err)
	}
	if after := ytd(); after == before {
		t.Errorf("w_ytd still %s after a payment", after)
	}
}
