package tprocc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/jackc/pgx/v5/pgconn"
)

// conflicting is a target whose sessions lose the first attempt of every
// New-Order to a serialization failure (SQLSTATE 40001) before it reaches
// the server, and note the inputs that attempt carried.
type conflicting struct {
	dbtarget.Target
	mu sync.Mutex
	// failed are the failed attempts' inputs, as inputs prints them.
	failed []string
	// orders are the committed New-Orders: where, their id, and the
	// inputs of the attempt that committed each.
	orders []placedOrder
}

// placedOrder is a committed New-Order's warehouse, district and id, and
// its inputs as inputs prints them.
type placedOrder struct {
	w, d   any
	id     int
	inputs string
}

// inputs prints a New-Order call's inputs, customer, items, supplying
// warehouses and quantities, whose slices the session reuses.
func inputs(args []any) string { return fmt.Sprint(args[2:6]...) }

func (c *conflicting) Session(ctx context.Context) (dbtarget.Session, error) {
	s, err := c.Target.Session(ctx)
	if err != nil {
		return nil, err
	}
	return &conflictingSession{Session: s, c: c}, nil
}

type conflictingSession struct {
	dbtarget.Session
	c *conflicting
	// lost says the last New-Order attempt was made to fail.
	lost bool
}

func (s *conflictingSession) QueryRow(ctx context.Context, sql string, args ...any) dbtarget.Row {
	if !strings.Contains(sql, "tprocc_neword") {
		return s.Session.QueryRow(ctx, sql, args...)
	}
	if !s.lost {
		s.lost = true
		s.c.mu.Lock()
		s.c.failed = append(s.c.failed, inputs(args))
		s.c.mu.Unlock()
		return dbtarget.ErrRow{Err: &pgconn.PgError{Code: "40001", Message: "could not serialize access (the test's)"}}
	}
	s.lost = false
	return orderRow{Row: s.Session.QueryRow(ctx, sql, args...), c: s.c, o: placedOrder{w: args[0], d: args[1], inputs: inputs(args)}}
}

// orderRow notes the order id a New-Order's row returns.
type orderRow struct {
	dbtarget.Row
	c *conflicting
	o placedOrder
}

func (r orderRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if err == nil {
		r.c.mu.Lock()
		r.o.id = *dest[0].(*int)
		r.c.orders = append(r.c.orders, r.o)
		r.c.mu.Unlock()
	}
	return err
}

// TestRetryKeepsInputsPostgres: a transaction the database asks to retry
// runs again with its first attempt's inputs. Every New-Order's first
// attempt fails before it reaches the server; the driver retries it, and
// the order the retry wrote holds the customer and the items, with their
// supplying warehouses and quantities, that the failed attempt carried.
func TestRetryKeepsInputsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a warehouse")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := onPostgres(t, 1)
	w, tg := openBuilt(t, url, 1)
	w.mode = workload.ModeProcs
	c := &conflicting{Target: tg}
	o, err := w.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	res, err := driver.Run(ctx, o, driver.Config{VUs: 2, Each: 40, Classify: c.Classify, Backoff: driver.Backoff{Base: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	no := res.Tx[txNewOrder]
	if no.Count == 0 || no.Retries != no.Count || no.Errors != 0 || no.Backoff <= 0 {
		t.Fatalf("New-Order: %d completed, %d retries, %d errors, %s of backoff; want one retry each, no error, a backoff", no.Count, no.Retries, no.Errors, no.Backoff)
	}
	if len(c.failed) != int(no.Count) {
		t.Fatalf("%d failed attempts for %d New-Orders, want one each", len(c.failed), no.Count)
	}
	// The attempts that committed carried what the failed ones did, and
	// each wrote it: its order's customer, and its lines.
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checked := 0
	for _, o := range c.orders {
		id := o.id
		if !slices.Contains(c.failed, o.inputs) {
			t.Errorf("order %d committed with %s, which no failed attempt carried", id, o.inputs)
		}
		var cust int32
		if err := s.QueryRow(ctx, "SELECT o_c_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3", o.w, o.d, id).Scan(&cust); err != nil {
			t.Fatalf("order %d: %v", id, err)
		}
		rows, err := s.Query(ctx, "SELECT ol_i_id, ol_supply_w_id, ol_quantity FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 ORDER BY ol_number", o.w, o.d, id)
		if err != nil {
			t.Fatal(err)
		}
		var items, supply, qty []int32
		for rows.Next() {
			var i, w, q int32
			if err := rows.Scan(&i, &w, &q); err != nil {
				t.Fatal(err)
			}
			items, supply, qty = append(items, i), append(supply, w), append(qty, q)
		}
		rows.Close()
		if wrote := fmt.Sprint(cust, items, supply, qty); wrote != o.inputs {
			t.Errorf("order %d wrote customer, items, supplying warehouses and quantities %s; its failed attempt carried %s", id, wrote, o.inputs)
		}
		checked++
	}
	// All but the intended rollbacks (1%) committed an order.
	if rolled := res.Tally[tRollbacks]; checked == 0 || int64(checked)+rolled != no.Count {
		t.Fatalf("%d orders read back and %d rolled back as intended, of %d New-Orders", checked, rolled, no.Count)
	}
	t.Logf("%d New-Orders, each retried once; %d read back, each as its failed attempt carried it", no.Count, checked)
}
