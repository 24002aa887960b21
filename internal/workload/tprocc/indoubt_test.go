package tprocc

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/jackc/pgx/v5"
)

// TestInDoubtPostgres: a connection lost while a write transaction's
// commit is in flight leaves it in doubt, in both modes, on a VU's own
// session and on a pool's; a read-only one simply fails. The test holds a
// lock on the one table the transaction's last batch (or its routine's
// last step) touches, waits for the transaction to wait on it, and ends
// its server connection: the commit was sent, and its answer never comes.
// A New-Order in doubt is logged so.
func TestInDoubtPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a warehouse")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := onPostgres(t, 1)
	w, tg := openBuilt(t, url, 1)
	side, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close(ctx)
	// cut runs run while side holds an exclusive lock on table, and cuts
	// the connection that waits on it.
	cut := func(table string, run func() error) error {
		lock, err := side.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Rollback(ctx)
		if _, err := lock.Exec(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		return pgtest.CutLockWaiter(t, url, run)
	}
	cases := []struct {
		tx      int
		lock    string
		inDoubt bool
	}{
		{txNewOrder, "order_line", true},
		{txPayment, "history", true},
		{txDelivery, "customer", true},
		{txOrderStatus, "customer", false},
		{txStockLevel, "stock", false},
	}
	for _, mode := range []string{workload.ModeSQL, workload.ModeProcs} {
		w.mode = mode
		o, err := w.Open(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		r := o.(*runner)
		var log bytes.Buffer
		flushed := r.LogAcks(&log)
		for _, c := range cases {
			for _, pooled := range []bool{false, true} {
				// Opened before the lock: preparing a statement locks its
				// tables too.
				run, closeVU := openTx(ctx, t, r, pooled, c.tx)
				err := cut(c.lock, run)
				closeVU()
				name := mode + " " + txNames[c.tx]
				if pooled {
					name += " pooled"
				}
				if doubt := errors.Is(err, driver.ErrInDoubt); doubt != c.inDoubt || tg.Classify(err) != dbtarget.ErrConnLost {
					t.Errorf("%s: %v (in doubt %v, %s); want in doubt %v, a lost connection", name, err, doubt, tg.Classify(err), c.inDoubt)
				}
			}
		}
		r.Close()
		if err := flushed(); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(log.String(), "\n? 1 "); n != 2 {
			t.Errorf("%s: %d New-Orders logged in doubt, want 2:\n%s", mode, n, log.String())
		}
	}
}

// openTx opens a virtual user of r, or a pool's session and terminal, and
// returns what runs transaction tx on it once, with fresh inputs, and
// what closes it.
func openTx(ctx context.Context, t *testing.T, r *runner, pooled bool, tx int) (func() error, func()) {
	t.Helper()
	if pooled {
		s, err := r.NewSession(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		tm := r.NewTerminal(0).(*terminal)
		tm.fresh = true
		return func() error { return s.Run(ctx, tm, tx, make(driver.Tally, len(tallyNames))) }, func() { s.Close() }
	}
	v, err := r.NewVU(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	v.(*vu).fresh = true
	return func() error { return v.Run(ctx, tx, make(driver.Tally, len(tallyNames))) }, func() { v.Close() }
}
