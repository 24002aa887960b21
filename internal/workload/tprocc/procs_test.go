package tprocc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget/postgres"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestNewOrderProcPostgres holds PostgreSQL's set-based New-Order to what
// the loop it replaced did: the stock rows lock in the client's line order
// under a generic plan, the lines, amounts, dist_info, stock and total are
// the spec's, and the unused item rolls everything back as DR001.
func TestNewOrderProcPostgres(t *testing.T) {
	_, conn := builtConn(t, 2)
	t.Run("plan", func(t *testing.T) { testNewOrderPlan(t, conn) })
	t.Run("lines", func(t *testing.T) { testNewOrderLines(t, conn, newOrderCase) })
	t.Run("repeats", func(t *testing.T) { testNewOrderLines(t, conn, repeatCase) })
	t.Run("rollback", func(t *testing.T) { testNewOrderRollback(t, conn) })
}

// builtConn builds warehouses in a database of the test's own and returns
// its URL and a connection to it, closed when the test ends.
func builtConn(t *testing.T, warehouses int) (string, *pgx.Conn) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds warehouses")
	}
	url := onPostgres(t, warehouses)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return url, conn
}

// procStatement is the statement of a proc block that re matches, with
// its INTO clause dropped and the routine's variables vars as parameters
// $1, $2, ..., so that it can be prepared and explained alone.
func procStatement(t *testing.T, block, re string, vars ...string) string {
	t.Helper()
	procs, err := workload.LoadSQL(sqlFiles, "sql", postgres.Dialect, "procs.sql")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(re).FindString(procs.Get(block))
	if m == "" {
		t.Fatalf("no %s in %s", re, block)
	}
	m = regexp.MustCompile(`\s+INTO (v_|low)[^\n]*`).ReplaceAllString(strings.TrimSuffix(m, ";"), "")
	for i, v := range vars {
		m = regexp.MustCompile(`\b`+v+`\b`).ReplaceAllString(m, fmt.Sprintf("$$%d", i+1))
	}
	return m
}

// explainGeneric returns the plan of stmt, prepared with the parameter
// types, under a generic plan (what PL/pgSQL settles on after five calls),
// for the arguments args: as JSON text and read.
func explainGeneric(t *testing.T, conn *pgx.Conn, types, stmt, args string) (string, *planNode) {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "PREPARE explained"+types+" AS "+stmt); err != nil {
		t.Fatal(err)
	}
	var plan string
	if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE explained"+args).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var doc []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(plan), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	return plan, &doc[0].Plan
}

// testNewOrderPlan: stock is updated through a nested loop whose outer
// side is the lines in their ordinal order and whose inner side probes
// stock's key, so the rows lock in the client's order. A hash or merge
// join would lock them in another order and could deadlock two New-Orders.
func testNewOrderPlan(t *testing.T, conn *pgx.Conn) {
	stmt := procStatement(t, "proc:tprocc_neword", `(?s)WITH l AS \(.*?FROM ins;`,
		"p_w_id", "p_d_id", "p_items", "p_supply_w", "p_qty", "order_id", "v_done")
	plan, root := explainGeneric(t, conn, "(int, int, int[], int[], int[], int, int[])", stmt, "(1, 1, '{1,2}', '{1,1}', '{5,5}', 1, '{}')")
	upd := root.find(func(n *planNode) bool { return n.Type == "ModifyTable" && n.Relation == "stock" })
	if upd == nil || len(upd.Plans) != 1 {
		t.Fatalf("no update of stock with one input in the plan:\n%s", plan)
	}
	join := &upd.Plans[0]
	if join.Type != "Nested Loop" || len(join.Plans) != 2 {
		t.Fatalf("stock's update is fed by %s, want a nested loop:\n%s", join.Type, plan)
	}
	outer, inner := &join.Plans[0], &join.Plans[1]
	if outer.Type != "CTE Scan" || outer.CTE != "l" {
		t.Errorf("the nested loop's outer side is %s %s, want the CTE scan of l (the lines in order):\n%s", outer.Type, outer.CTE, plan)
	}
	if !strings.HasPrefix(inner.Type, "Index") || inner.Relation != "stock" {
		t.Errorf("the nested loop's inner side is %s on %s, want an index probe of stock:\n%s", inner.Type, inner.Relation, plan)
	}
	// l is in the lines' order: sorted on the ordinal, or the function
	// scan (which yields it in that order) driving a nested loop over item.
	l := root.find(func(n *planNode) bool { return n.Subplan == "CTE l" })
	ordered := l != nil && (l.Type == "Sort" || l.Type == "Nested Loop" && l.Plans[0].Type == "Function Scan")
	if !ordered {
		t.Errorf("CTE l is not in the lines' order:\n%s", plan)
	}
}

// planNode is what the tests read of EXPLAIN's JSON.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	CTE      string     `json:"CTE Name"`
	Subplan  string     `json:"Subplan Name"`
	Parent   string     `json:"Parent Relationship"`
	Plans    []planNode `json:"Plans"`
}

// find returns the first node, depth first, that is.
func (n *planNode) find(is func(*planNode) bool) *planNode {
	if is(n) {
		return n
	}
	for i := range n.Plans {
		if f := n.Plans[i].find(is); f != nil {
			return f
		}
	}
	return nil
}

// stockRow is what New-Order reads and writes of one stock row.
type stockRow struct {
	quantity, ytd, orders, remote int
	dist                          string
}

func readStock(t *testing.T, conn *pgx.Conn, w, item, d int) stockRow {
	t.Helper()
	var s stockRow
	err := conn.QueryRow(context.Background(), fmt.Sprintf(`SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt, s_dist_%02d
		FROM stock WHERE s_w_id = $1 AND s_i_id = $2`, d), w, item).Scan(&s.quantity, &s.ytd, &s.orders, &s.remote, &s.dist)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newOrderInputs is one New-Order's input.
type newOrderInputs struct {
	w, d, c             int
	items, supply, qtys []int
}

// newOrderCase has lines sorted as the client sends them, two remote.
var newOrderCase = newOrderInputs{1, 3, 5, []int{17, 40, 250, 777, 9000}, []int{1, 2, 1, 2, 1}, []int{5, 3, 10, 7, 1}}

// repeatCase orders one item from one warehouse three times, with enough
// in all to take the stock below 10 and back up by 91.
var repeatCase = newOrderInputs{2, 7, 9, []int{3, 3, 3, 88}, []int{2, 2, 2, 2}, []int{10, 10, 10, 2}}

// testNewOrderLines: the lines are the spec's (2.4.2.2): numbered in input
// order, each amount quantity × price, dist_info the district's s_dist_xx;
// the stock rows move as the spec says, line after line where a line
// repeats another's, and the total is the sum with discount and taxes.
func testNewOrderLines(t *testing.T, conn *pgx.Conn, in newOrderInputs) {
	ctx := context.Background()
	before := make([]stockRow, len(in.items))
	prices := make([]string, len(in.items))
	for i := range in.items {
		before[i] = readStock(t, conn, in.supply[i], in.items[i], in.d)
		if err := conn.QueryRow(ctx, "SELECT i_price::text FROM item WHERE i_id = $1", in.items[i]).Scan(&prices[i]); err != nil {
			t.Fatal(err)
		}
	}
	var next int
	if err := conn.QueryRow(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2", in.w, in.d).Scan(&next); err != nil {
		t.Fatal(err)
	}
	var id int
	var total string
	err := conn.QueryRow(ctx, "SELECT order_id, total_amount::text FROM tprocc_neword($1, $2, $3, $4, $5, $6, $7)",
		in.w, in.d, in.c, in.items, in.supply, in.qtys, time.Now()).Scan(&id, &total)
	if err != nil {
		t.Fatal(err)
	}
	if id != next {
		t.Errorf("order id %d, want the district's next, %d", id, next)
	}
	rows, err := conn.Query(ctx, `SELECT ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount::text, ol_dist_info,
		ol_delivery_d IS NULL FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 ORDER BY ol_number`, in.w, in.d, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var nr, item, supply, qty int
	var amount, dist string
	var undelivered bool
	if _, err := pgx.ForEachRow(rows, []any{&nr, &item, &supply, &qty, &amount, &dist, &undelivered}, func() error {
		got = append(got, fmt.Sprintf("%d %d %d %d %s %s %t", nr, item, supply, qty, amount, dist, undelivered))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	stock := map[[2]int]stockRow{}
	for i := range in.items {
		var amount string
		if err := conn.QueryRow(ctx, "SELECT ($1::int * $2::numeric)::numeric(6,2)::text", in.qtys[i], prices[i]).Scan(&amount); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%d %d %d %d %s %s true", i+1, in.items[i], in.supply[i], in.qtys[i], amount, before[i].dist))
		key := [2]int{in.supply[i], in.items[i]}
		st, ok := stock[key]
		if !ok {
			st = before[i]
		}
		st.quantity -= in.qtys[i]
		if st.quantity < 10 {
			st.quantity += 91
		}
		st.ytd += in.qtys[i]
		st.orders++
		if in.supply[i] != in.w {
			st.remote++
		}
		stock[key] = st
	}
	for key, want := range stock {
		if s := readStock(t, conn, key[0], key[1], in.d); s != want {
			t.Errorf("stock of item %d in warehouse %d: %+v, want %+v", key[1], key[0], s, want)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("order lines (number item supply qty amount dist undelivered):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var wantTotal string
	err = conn.QueryRow(ctx, `SELECT round(sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax), 2)::text
		FROM order_line, customer, warehouse, district
		WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 AND c_w_id = $1 AND c_d_id = $2 AND c_id = $4
		  AND w_id = $1 AND d_w_id = $1 AND d_id = $2
		GROUP BY c_discount, w_tax, d_tax`, in.w, in.d, id, in.c).Scan(&wantTotal)
	if err != nil || total != wantTotal {
		t.Errorf("total %s, want %s (%v)", total, wantTotal, err)
	}
	wantLocal := 1
	for _, w := range in.supply {
		if w != in.w {
			wantLocal = 0
		}
	}
	var cnt, local int
	if err := conn.QueryRow(ctx, `SELECT o_ol_cnt, o_all_local FROM orders JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
		WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3`, in.w, in.d, id).Scan(&cnt, &local); err != nil || cnt != len(in.items) || local != wantLocal {
		t.Errorf("order: %d lines, all local %d (%v); want %d, %d and a new_order row", cnt, local, err, len(in.items), wantLocal)
	}
}

// testNewOrderRollback: an unused last item raises DR001, and the order,
// its lines and the stock of the items found before it are all undone.
func testNewOrderRollback(t *testing.T, conn *pgx.Conn) {
	ctx := context.Background()
	in := newOrderCase
	items := append(append([]int{}, in.items[:len(in.items)-1]...), unusedItem)
	state := func() string {
		var s string
		err := conn.QueryRow(ctx, `SELECT format('%s %s %s %s', (SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2),
			(SELECT count(*) FROM orders), (SELECT count(*) FROM order_line),
			(SELECT string_agg(concat_ws(',', s_quantity, s_ytd, s_order_cnt, s_remote_cnt), ' ' ORDER BY s_w_id, s_i_id)
			   FROM stock WHERE (s_w_id, s_i_id) IN (SELECT * FROM unnest($3::int[], $4::int[]))))`,
			in.w, in.d, in.supply, in.items).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := state()
	_, err := conn.Exec(ctx, "SELECT tprocc_neword($1, $2, $3, $4, $5, $6, $7)", in.w, in.d, in.c, items, in.supply, in.qtys, time.Now())
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "DR001" {
		t.Fatalf("New-Order with the unused item: %v, want SQLSTATE DR001", err)
	}
	if after := state(); after != before {
		t.Errorf("after the rollback: %s, want as before: %s", after, before)
	}
}

// TestQuietRollbackPostgres: New-Order's intended rollback leaves no line
// in the server log when the role may set the log settings (a superuser,
// or one granted SET on both), and one ERROR each when it may not, with
// DR001 either way; the database counts every one as a rollback, and
// dbrig check's note says which it is.
func TestQuietRollbackPostgres(t *testing.T) {
	url, conn := builtConn(t, 1)
	ctx := context.Background()
	log := filepath.Join(pgtest.Start(t).Dir, "server.log")
	logged := func() int {
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "ERROR:  item not found")
	}
	in := newOrderCase
	items := append(append([]int{}, in.items[:len(in.items)-1]...), unusedItem)
	rollBack := func(times int) {
		t.Helper()
		for range times {
			_, err := conn.Exec(ctx, "SELECT tprocc_neword($1, $2, $3, $4, $5, $6, $7)", in.w, in.d, in.c, items, in.supply, in.qtys, time.Now())
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "DR001" {
				t.Fatalf("New-Order with the unused item: %v, want SQLSTATE DR001", err)
			}
		}
	}
	role := fmt.Sprintf("tprocc_plain_%d", time.Now().UnixNano())
	for _, stmt := range []string{"CREATE ROLE " + role, "GRANT ALL ON ALL TABLES IN SCHEMA public TO " + role} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			conn.Exec(ctx, "DROP OWNED BY "+role)
			conn.Exec(ctx, "DROP ROLE "+role)
			conn.Close(ctx)
		}
	})
	check, err := workload.LoadSQL(sqlFiles, "sql", postgres.Dialect, "check.sql")
	if err != nil {
		t.Fatal(err)
	}
	checkNote := func(want bool) {
		t.Helper()
		var note *string
		if err := conn.QueryRow(ctx, check.Get("note")).Scan(&note); err != nil || (note != nil) != want {
			t.Errorf("check's note %v (%v), want one: %t", note, err, want)
		}
	}
	var xacts0 int64
	if err := conn.QueryRow(ctx, "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()").Scan(&xacts0); err != nil {
		t.Fatal(err)
	}

	before := logged()
	rollBack(4)
	checkNote(false)
	if n := logged() - before; n != 0 {
		t.Errorf("as superuser: %d ERROR lines for 4 rollbacks, want none", n)
	}
	if _, err := conn.Exec(ctx, "SET ROLE "+role); err != nil {
		t.Fatal(err)
	}
	before = logged()
	rollBack(3)
	checkNote(true)
	if n := logged() - before; n != 3 {
		t.Errorf("as a role that may not set the log settings: %d ERROR lines for 3 rollbacks, want 3", n)
	}
	for _, stmt := range []string{"RESET ROLE", "GRANT SET ON PARAMETER log_min_messages, log_min_error_statement TO " + role, "SET ROLE " + role} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	before = logged()
	rollBack(2)
	checkNote(false)
	if n := logged() - before; n != 0 {
		t.Errorf("as a role granted SET on both: %d ERROR lines for 2 rollbacks, want none", n)
	}
	if _, err := conn.Exec(ctx, "RESET ROLE"); err != nil {
		t.Fatal(err)
	}

	// The database counts each rollback, once the backend has flushed its
	// statistics, which it is told to do at its next statement's end.
	if _, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	var xacts int64
	for deadline := time.Now().Add(10 * time.Second); xacts-xacts0 < 9 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := conn.QueryRow(ctx, "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()").Scan(&xacts); err != nil {
			t.Fatal(err)
		}
	}
	if xacts-xacts0 != 9 {
		t.Errorf("xact_rollback rose by %d, want the 9 rollbacks", xacts-xacts0)
	}
}

// TestStockLevelPlanPostgres: under a generic plan, Stock-Level reads the
// district's recent lines through order_line's key and each distinct
// item's stock with one probe of stock's key, never a scan or a join over
// the warehouse's stock, whatever the range of orders is estimated at.
func TestStockLevelPlanPostgres(t *testing.T) {
	_, conn := builtConn(t, 1)
	stmt := procStatement(t, "proc:tprocc_slev", `(?s)SELECT count\(\*\) INTO low.*?;`, "p_w_id", "p_d_id", "p_threshold", "v_next")
	plan, root := explainGeneric(t, conn, "(int, int, int, int)", stmt, "(1, 1, 15, 3001)")
	probe := root.find(func(n *planNode) bool { return n.Parent == "SubPlan" })
	if probe == nil || !strings.HasPrefix(probe.Type, "Index") || probe.Relation != "stock" {
		t.Errorf("no index probe of stock as a subplan:\n%s", plan)
	}
	if bad := root.find(func(n *planNode) bool {
		return strings.HasSuffix(n.Type, "Join") || n.Type == "Seq Scan" || n.Relation == "stock" && n != probe
	}); bad != nil {
		t.Errorf("a %s on %q in the plan, want the probes alone:\n%s", bad.Type, bad.Relation, plan)
	}
}
