package tprocc

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	"github.com/dbrig/dbrig/internal/dbtarget/postgres"
	"github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/workload"
)

func TestCheckSQLite(t *testing.T) {
	testCheck(t, onSQLite)
}

func TestCheckPostgres(t *testing.T) {
	testCheck(t, onPostgres)
}

// corruption breaks one warehouse's data in a known way; undo puts it
// back so that one build serves every case. fail is the exact set of
// conditions that must then fail.
type corruption struct {
	name string
	do   []string
	undo []string
	fail []int
}

var corruptions = []corruption{
	{
		name: "warehouse YTD off by one",
		do:   []string{"UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1"},
		undo: []string{"UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1"},
		fail: []int{1, 8},
	},
	{
		name: "district YTD off by one",
		do:   []string{"UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 3"},
		undo: []string{"UPDATE district SET d_ytd = d_ytd - 1 WHERE d_w_id = 1 AND d_id = 3"},
		fail: []int{1, 9},
	},
	{
		name: "district's next order id skips one",
		do:   []string{"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 2"},
		undo: []string{"UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE d_w_id = 1 AND d_id = 2"},
		fail: []int{2},
	},
	{
		// Moved out of the checked warehouse rather than deleted, so it
		// can come back. A delivered order's lines carry no amount, so
		// the customer conditions hold.
		name: "order line of a delivered order missing",
		do:   []string{"UPDATE order_line SET ol_w_id = 99 WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 5 AND ol_number = 1"},
		undo: []string{"UPDATE order_line SET ol_w_id = 1 WHERE ol_w_id = 99"},
		fail: []int{4, 6},
	},
	{
		name: "order line count overstated",
		do:   []string{"UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 2500"},
		undo: []string{"UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 2500"},
		fail: []int{4, 6},
	},
	{
		name: "delivered order loses its carrier",
		do:   []string{"UPDATE orders SET o_carrier_id = NULL WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 7"},
		undo: []string{"UPDATE orders SET o_carrier_id = 1 WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 7"},
		fail: []int{5, 7},
	},
	{
		name: "new order in the middle missing",
		do:   []string{"DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 5 AND no_o_id = 2500"},
		undo: []string{"INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (2500, 5, 1)"},
		fail: []int{3, 5, 11},
	},
	{
		name: "customer balance off by one",
		do:   []string{"UPDATE customer SET c_balance = c_balance + 1 WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 42"},
		undo: []string{"UPDATE customer SET c_balance = c_balance - 1 WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 42"},
		fail: []int{10, 12},
	},
	{
		name: "payment history row missing",
		do:   []string{"UPDATE history SET h_w_id = 99, h_c_w_id = 99 WHERE h_c_w_id = 1 AND h_c_d_id = 7 AND h_c_id = 9"},
		undo: []string{"UPDATE history SET h_w_id = 1, h_c_w_id = 1 WHERE h_c_w_id = 99"},
		fail: []int{8, 9, 10},
	},
}

// deliver does by hand what one Delivery does to order 2101 of district 1
// (clause 2.7.4.2), leaving the database consistent but no longer fresh.
var deliver = []string{
	"DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 2101",
	"UPDATE orders SET o_carrier_id = 3 WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 2101",
	"UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 2101",
	`UPDATE customer SET
	   c_balance = c_balance + (SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 2101),
	   c_delivery_cnt = c_delivery_cnt + 1
	 WHERE c_w_id = 1 AND c_d_id = 1
	   AND c_id = (SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 2101)`,
}

func testCheck(t *testing.T, src source) {
	ctx := context.Background()
	w, tg := buildOn(t, src, 1)
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exec := func(stmts []string) {
		t.Helper()
		for _, q := range stmts {
			if _, err := s.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}

	began := time.Now()
	expect(t, w, tg, "fresh build", nil, nil)
	t.Logf("%s: check of 1 warehouse took %v", tg.Kind(), time.Since(began).Round(time.Millisecond))

	for _, c := range corruptions {
		exec(c.do)
		expect(t, w, tg, c.name, c.fail, nil)
		exec(c.undo)
	}

	exec(deliver)
	expect(t, w, tg, "after a delivery", nil, []int{freshOnly})
}

// expect runs the check and compares each condition's verdict with what
// the case should give: FAIL for those in fail, SKIP for those in skip,
// PASS for the rest.
func expect(t *testing.T, w *tprocc, tg dbtarget.Target, what string, fail, skip []int) {
	t.Helper()
	var out bytes.Buffer
	ok, err := w.Check(context.Background(), tg, &out)
	if err != nil {
		t.Fatalf("%s: check: %v", what, err)
	}
	want := map[string]string{}
	for _, c := range conditions {
		want[c.id()] = "PASS"
	}
	for _, n := range fail {
		want["3.3.2."+strconv.Itoa(n)] = "FAIL"
	}
	for _, n := range skip {
		want["3.3.2."+strconv.Itoa(n)] = "SKIP"
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("%s: bad line %q", what, line)
		}
		got[f[1]] = f[0]
	}
	bad := false
	for id, v := range want {
		if got[id] != v {
			bad = true
			t.Errorf("%s: %s is %q, want %s", what, id, got[id], v)
		}
	}
	if len(got) != len(want) {
		bad = true
		t.Errorf("%s: %d lines, want %d", what, len(got), len(want))
	}
	if ok != (len(fail) == 0) {
		bad = true
		t.Errorf("%s: check returned ok=%v", what, ok)
	}
	if bad {
		t.Logf("%s: output:\n%s", what, out.String())
	}
}

func TestWarehouseList(t *testing.T) {
	for _, c := range []struct {
		ws   []int
		want string
	}{
		{[]int{3}, "warehouse 3"},
		{[]int{1, 2}, "warehouses 1,2"},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "warehouses 1,2,3,4,5,6,7,8,9,10, ... (12 in all)"},
	} {
		if got := warehouseList(c.ws); got != c.want {
			t.Errorf("warehouseList(%v) = %q, want %q", c.ws, got, c.want)
		}
	}
	if got := plural(1, "violation"); got != "1 violation" {
		t.Errorf("plural(1) = %q", got)
	}
	if got := plural(3, "violation"); got != "3 violations" {
		t.Errorf("plural(3) = %q", got)
	}
}

// TestCheckBlocks catches a condition without its query in any dialect,
// and a block check never runs.
func TestCheckBlocks(t *testing.T) {
	for _, d := range []dbtarget.Dialect{postgres.Dialect, sqlite.Dialect, mariadb.Dialect} {
		q, err := workload.LoadSQL(sqlFiles, "sql", d, "check.sql")
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"delivered"}
		for _, c := range conditions {
			names = append(names, "cond"+strconv.Itoa(c.n))
		}
		for _, n := range names {
			if _, ok := q[n]; !ok {
				t.Errorf("%s check.sql: no block %s", d.Name, n)
			}
		}
		// The one optional block: a note for check to print (printNote).
		if _, ok := q["note"]; ok {
			names = append(names, "note")
		}
		if len(q) != len(names) {
			t.Errorf("%s check.sql: %d blocks, want %d", d.Name, len(q), len(names))
		}
	}
}

// TestCheckError: a query that fails stops the check, and the error names
// what was being checked.
func TestCheckError(t *testing.T) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, "sqlite:"+t.TempDir()+"/empty.db")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var out bytes.Buffer
	ok, err := check(ctx, tg, 2, &out)
	if err == nil || ok {
		t.Fatalf("check on an empty database: ok=%v err=%v", ok, err)
	}
	if !strings.Contains(err.Error(), "warehouse") || !strings.Contains(err.Error(), "no such table") {
		t.Errorf("error does not say where it failed: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed verdicts despite the error:\n%s", out.String())
	}
}
