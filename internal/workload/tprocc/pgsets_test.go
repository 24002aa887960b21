package tprocc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbrig/dbrig/internal/dbtarget/postgres"
)

// TestSetFormsPostgres holds the plans and arithmetic of sql mode's set
// forms on PostgreSQL.
func TestSetFormsPostgres(t *testing.T) {
	url, conn := builtConn(t, 1)
	q := txSQLFile(t, postgres.Dialect)
	t.Run("delivery race", func(t *testing.T) { testDeliveryRace(t, url, conn, q.Get("dl_new_order")) })

	// The stock read locks its rows in the lines' order: LockRows sits at
	// the top, over ORDER BY l.n, so it takes the rows in that order. Under
	// the generic plan a prepared statement settles on, they come from a
	// nested loop whose outer side is the lines' function scan (which
	// yields them in their ordinal order, so the planner needs no sort) and
	// whose inner side probes stock by its key.
	t.Run("stock lock order", func(t *testing.T) {
		plan, root := explainGeneric(t, conn, "(int[], int[], int, int[], int)", q.Get("no_stocks"),
			"('{1,1,1}', '{7,9,100001}', 3, '{5,5,5}', 1)")
		if root.Type != "LockRows" || len(root.Plans) != 1 {
			t.Fatalf("the stock read's plan is %s, want LockRows at its top:\n%s", root.Type, plan)
		}
		if sort := root.find(func(n *planNode) bool { return n.Type == "Sort" }); sort != nil && !strings.Contains(plan, `"l.n"`) {
			t.Fatalf("the stock read sorts on other than the line number:\n%s", plan)
		}
		join := root.find(func(n *planNode) bool { return n.Type == "Nested Loop" })
		if join == nil || len(join.Plans) != 2 {
			t.Fatalf("the lines and stock are joined other than by a nested loop:\n%s", plan)
		}
		outer, inner := &join.Plans[0], &join.Plans[1]
		if outer.Type != "Function Scan" {
			t.Errorf("the nested loop's outer side is %s, want the lines' function scan:\n%s", outer.Type, plan)
		}
		if !strings.HasPrefix(inner.Type, "Index") || inner.Relation != "stock" {
			t.Errorf("the nested loop's inner side is %s on %s, want an index probe of stock:\n%s", inner.Type, inner.Relation, plan)
		}
	})

	// Delivery's customers get their lines' sums, sent in cents, to the
	// cent: 1999 cents is 19.99, where int / int would add 19.
	t.Run("delivery cents", func(t *testing.T) {
		ctx := context.Background()
		balance := func(d, c int) (s string) {
			t.Helper()
			err := conn.QueryRow(ctx, "SELECT c_balance::text FROM customer WHERE c_w_id = 1 AND c_d_id = $1 AND c_id = $2", d, c).Scan(&s)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		var want [2]string
		err := conn.QueryRow(ctx, `SELECT (c_balance + 19.99)::text, (SELECT (c_balance + 0.07)::text FROM customer
			WHERE c_w_id = 1 AND c_d_id = 4 AND c_id = 11) FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id = 10`).Scan(&want[0], &want[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, q.Get("dl_customers"), 1, []int32{3, 4}, []int32{10, 11}, []int32{1999, 7}); err != nil {
			t.Fatal(err)
		}
		if got := [2]string{balance(3, 10), balance(4, 11)}; got != want {
			t.Errorf("balances after a delivery of 1999 and 7 cents: %v, want %v", got, want)
		}
	})
}

// testDeliveryRace: a Delivery whose district's oldest new order another
// Delivery holds waits for it, then takes the next oldest rather than
// nothing, so it never comes back to the district after locking later
// ones.
func testDeliveryRace(t *testing.T, url string, conn *pgx.Conn, takeOldest string) {
	ctx := context.Background()
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	first, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback(ctx)
	var oldest int
	if err := first.QueryRow(ctx, takeOldest, 1, 5).Scan(&oldest); err != nil {
		t.Fatal(err)
	}
	next := make(chan int, 1)
	errs := make(chan error, 1)
	go func() {
		var o int
		err := other.QueryRow(ctx, takeOldest, 1, 5).Scan(&o)
		errs <- err
		next <- o
	}()
	// The second waits on the first's row until it commits.
	time.Sleep(200 * time.Millisecond)
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("the second Delivery's take, after the first took order %d: %v", oldest, err)
	}
	if got := <-next; got != oldest+1 {
		t.Errorf("the second Delivery took order %d, want %d, the next oldest after the first's %d", got, oldest+1, oldest)
	}
}
