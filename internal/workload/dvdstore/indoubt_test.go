package dvdstore

import (
	"context"
	"errors"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestPurchaseInDoubtPostgres: a purchase whose connection is lost while
// its commit waits is in doubt, in both modes; one lost before its
// statements reach the commit simply fails, where the commit is a
// statement of its own (sql), and is in doubt where the one call of the
// routine commits (procs). The commit waits on an advisory lock that a
// deferred trigger takes, the statements on a product's row lock; the test
// holds either, and cuts the connection that waits on it.
func TestPurchaseInDoubtPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDB(t)
	r, tg := openSmall(t, url, 1, 0)
	holder, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for _, q := range []string{
		"UPDATE ds_inventory SET quan_in_stock = 1000 WHERE prod_id <= 3",
		`CREATE FUNCTION wait_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER wait_at_commit AFTER INSERT ON ds_orders
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION wait_at_commit()`,
	} {
		if _, err := holder.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, mode string
		hold       []string
		inDoubt    bool
	}{
		{"sql, at the commit", workload.ModeSQL, []string{"SELECT pg_advisory_lock(4242)"}, true},
		{"sql, before it", workload.ModeSQL, []string{"BEGIN", "SELECT 1 FROM ds_inventory WHERE prod_id = 2 FOR UPDATE"}, false},
		{"procs, at the commit", workload.ModeProcs, []string{"SELECT pg_advisory_lock(4242)"}, true},
		{"procs, before it", workload.ModeProcs, []string{"BEGIN", "SELECT 1 FROM ds_inventory WHERE prod_id = 2 FOR UPDATE"}, true},
	} {
		cfg := r.cfg
		cfg.mode = c.mode
		buyer, err := openSession(ctx, tg, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range c.hold {
			if _, err := holder.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		buyer.cart = []item{{prod: 1, qty: 1}, {prod: 2, qty: 1}, {prod: 3, qty: 1}}
		tally := make(driver.Tally, len(tallyNames))
		err = pgtest.CutLockWaiter(t, url, func() error { return buyer.purchase(ctx, &terminal{customer: 1}, tally) })
		buyer.Close()
		if _, rerr := holder.Exec(ctx, "SELECT pg_advisory_unlock_all()"); rerr != nil {
			t.Fatal(rerr)
		}
		if len(c.hold) > 1 {
			if _, rerr := holder.Exec(ctx, "ROLLBACK"); rerr != nil {
				t.Fatal(rerr)
			}
		}
		if doubt := errors.Is(err, driver.ErrInDoubt); doubt != c.inDoubt || tg.Classify(err) != dbtarget.ErrConnLost {
			t.Errorf("%s: %v (in doubt %v, %s); want in doubt %v, a lost connection", c.name, err, doubt, tg.Classify(err), c.inDoubt)
		}
	}
}
