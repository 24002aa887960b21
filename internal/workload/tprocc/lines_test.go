package tprocc

import (
	"context"
	"database/sql"
	"testing"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestNewOrderRepeatedLines: two lines of one item from one warehouse
// update its stock one after the other, the second seeing the first, as
// two statements do. MariaDB's and PostgreSQL's set updates would change
// the row once, so their client updates such an order line by line;
// SQLite updates every order line by line.
func TestNewOrderRepeatedLinesMariaDB(t *testing.T) {
	testNewOrderRepeatedLines(t, onMariaDB)
}

func TestNewOrderRepeatedLinesPostgres(t *testing.T) {
	testNewOrderRepeatedLines(t, onPostgres)
}

func TestNewOrderRepeatedLinesSQLite(t *testing.T) {
	testNewOrderRepeatedLines(t, onSQLite)
}

func testNewOrderRepeatedLines(t *testing.T, src source) {
	if testing.Short() {
		t.Skip("builds a warehouse")
	}
	ctx := context.Background()
	_, tg := buildOn(t, src, 1)
	cfg := &runConfig{Warehouses: 1, Mode: workload.ModeSQL, Seed: 7, C: runConstants(7, loadConstant(defaultSeed)), Q: txSQLFile(t, tg.Dialect())}
	v, err := newVU(ctx, tg, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	type stockRow struct{ quantity, ytd, orders int }
	stock := func(item int) (s stockRow) {
		t.Helper()
		err := v.S.QueryRow(ctx, "SELECT s_quantity, s_ytd, s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = $1", item).Scan(&s.quantity, &s.ytd, &s.orders)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Clause 2.4.2.2's new quantity after an order of q.
	after := func(quantity, q int) int {
		if quantity >= q+10 {
			return quantity - q
		}
		return quantity - q + 91
	}

	txImpl[txNewOrder].gen(v.session, &v.terminal)
	in := &v.no
	in.rollback, in.remote = false, 0
	in.lines = []orderLineInput{{item: 7, supplyW: 1, qty: 9}, {item: 7, supplyW: 1, qty: 8}, {item: 9, supplyW: 1, qty: 4}}
	in.lists()
	s7, s9 := stock(7), stock(9)
	tally := make(driver.Tally, len(tallyNames))
	if err := v.Run(ctx, txNewOrder, tally); err != nil {
		t.Fatal(err)
	}
	want7 := stockRow{after(after(s7.quantity, 9), 8), s7.ytd + 17, s7.orders + 2}
	want9 := stockRow{after(s9.quantity, 4), s9.ytd + 4, s9.orders + 1}
	if got := stock(7); got != want7 {
		t.Errorf("item 7's stock after two lines: %+v, want %+v (from %+v)", got, want7, s7)
	}
	if got := stock(9); got != want9 {
		t.Errorf("item 9's stock: %+v, want %+v (from %+v)", got, want9, s9)
	}

	// The order's lines, numbered in the client's order, with the amounts
	// the client totalled.
	var lines, qty int
	var amount float64
	err = v.S.QueryRow(ctx, `SELECT count(*), sum(ol_number * ol_quantity), sum(ol_amount) FROM order_line
		WHERE ol_w_id = 1 AND ol_d_id = $1 AND ol_o_id = (SELECT d_next_o_id - 1 FROM district WHERE d_w_id = 1 AND d_id = $1)`, in.d).Scan(&lines, &qty, &amount)
	if err != nil {
		t.Fatal(err)
	}
	want := cents(9*v.prices[0]) + cents(8*v.prices[1]) + cents(4*v.prices[2])
	if lines != 3 || qty != 1*9+2*8+3*4 || cents(amount) != cents(want) {
		t.Errorf("order lines: %d, sum(number*quantity) %d, amount %.2f; want 3, 37, %.2f", lines, qty, amount, want)
	}
}

// TestNewOrderStockLockOrderMariaDB: New-Order's stock read takes its rows
// as the join reaches them, so the lines' lists must drive the join and
// stock come last, looked up by its key: then the rows are locked in the
// lines' order, one global order for every New-Order.
func TestNewOrderStockLockOrderMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a warehouse")
	}
	ctx := context.Background()
	_, tg := buildOn(t, onMariaDB, 1)
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q := txSQLFile(t, tg.Dialect())
	rows, err := s.Query(ctx, "EXPLAIN "+q.Get("no_stocks"), "[1,1,1]", "[7,9,100001]", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var tables []string
	var last string
	for rows.Next() {
		cols := make([]any, 10)
		for i := range cols {
			cols[i] = new(sql.NullString)
		}
		if err := rows.Scan(cols...); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, cols[2].(*sql.NullString).String)
		last = cols[3].(*sql.NullString).String
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) != 3 || tables[2] != "stock" || last != "eq_ref" {
		t.Errorf("the stock read's plan joins %v, the last by %s; want the lines first, then stock by its key", tables, last)
	}
}
