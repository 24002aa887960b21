package tprocc

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
)

// newOrderInput is a New-Order's terminal input (clause 2.4.1).
type newOrderInput struct {
	w, d, c  int
	lines    []orderLineInput
	remote   int  // lines supplied by another warehouse
	rollback bool // the last line asks for the unused item
	// The lines as the routine, or a dialect's set reads, take them.
	items, supplyW, qty []int32
	// found says, for line i, whether its item (2i) and its stock (2i+1)
	// were read.
	found []bool
	// row is the line a set read's row answers, 1-based, and price its
	// item's price; itemRow and stockRow read those rows.
	row               int
	price             float64
	dist              string
	itemRow, stockRow func(dbtarget.Row) error
	// total is the order's total amount, as the terminal would show it.
	total float64
}

type orderLineInput struct {
	item, supplyW, qty int
}

func (v *session) genNewOrder(tm *terminal) {
	in := &v.no
	in.w = tm.warehouse()
	in.d = tm.r.Int(1, districtsPerWH)
	in.c = tm.r.NURand(1023, 1, customersPerDist, v.cfg.C.ID)
	n := tm.r.Int(minOrderLines, maxOrderLines)
	in.rollback = v.rollbacks.Deal(&tm.r) == 1
	in.lines = in.lines[:0]
	in.remote = 0
	for i := range n {
		l := orderLineInput{item: tm.r.NURand(8191, 1, items, v.cfg.C.ItemID), supplyW: in.w}
		if in.rollback && i == n-1 {
			l.item = unusedItem
		}
		if v.cfg.Warehouses > 1 && v.remoteLine.Deal(&tm.r) == 1 {
			l.supplyW = tm.otherWarehouse(in.w)
			in.remote++
		}
		l.qty = tm.r.Int(1, 10)
		in.lines = append(in.lines, l)
	}
	// Every New-Order takes its stock rows in one global order, so two of
	// them cannot deadlock on each other's. The unused item sorts last,
	// where clause 2.4.1.5 puts it.
	slices.SortFunc(in.lines, func(a, b orderLineInput) int {
		return cmp.Or(cmp.Compare(a.item, b.item), cmp.Compare(a.supplyW, b.supplyW))
	})
	if v.procs || v.q.noItems != "" {
		in.lists()
	}
}

// lists makes the lines the lists the routine, or a dialect's set forms,
// take.
func (in *newOrderInput) lists() {
	in.items, in.supplyW, in.qty = in.items[:0], in.supplyW[:0], in.qty[:0]
	for _, l := range in.lines {
		in.items = append(in.items, int32(l.item))
		in.supplyW = append(in.supplyW, int32(l.supplyW))
		in.qty = append(in.qty, int32(l.qty))
	}
}

// newOrderSQL is clause 2.4.2 as statements from the client, in three
// batches, each one round trip where the target pipelines them: the
// district and the customer; the order, its new-order row and each
// line's item and stock; the order lines and the commit. Where the dialect
// has set forms (no_items, no_stocks, no_lines), each of those is one
// statement for all the lines rather than one a line; where it has
// no_district_order, the district's update inserts the order and its
// new-order row with the number it takes, and the first two batches are
// one. No statement needs the result of another in its own batch. An
// unused item is found as the clause finds it, with every line's work
// done before the rollback.
func (v *session) newOrderSQL(ctx context.Context, t driver.Tally) error {
	in, q := &v.no, &v.q
	entry := now()
	var oID int
	var dTax, wTax, discount float64
	d := v.discard(2)
	allLocal := 0
	if in.remote == 0 {
		allLocal = 1
	}
	b := append(v.batch[:0], dbtarget.Query{SQL: q.beginWrite})
	// c_last and c_credit are shown, not used.
	customer := dbtarget.Query{SQL: q.noCustomer, Args: []any{in.w, in.d, in.c}, Dest: []any{&discount, d[0], d[1], &wTax}}
	if q.noDistrictOrder != "" {
		b = append(b, dbtarget.Query{SQL: q.noDistrictOrder, Args: []any{in.w, in.d, in.c, entry, len(in.lines), allLocal},
			Dest: []any{&dTax, &oID}}, customer)
	} else {
		b = queueStep(b, q.noDistrict, []any{&dTax, &oID}, false, in.w, in.d)
		if err := v.send(ctx, append(b, customer)); err != nil {
			return err
		}
		b = append(b[:0],
			dbtarget.Query{SQL: q.noOrder, Args: []any{oID, in.d, in.w, in.c, entry, len(in.lines), allLocal}},
			dbtarget.Query{SQL: q.noNewOrder, Args: []any{oID, in.d, in.w}})
	}
	n := len(in.lines)
	v.prices, v.dists = slices.Grow(v.prices[:0], n)[:n], slices.Grow(v.dists[:0], n)[:n]
	in.found = slices.Grow(in.found[:0], 2*n)[:2*n]
	clear(in.found)
	if q.noItems != "" {
		b = v.queueLineSets(b)
	} else {
		b = v.queueLines(b)
	}
	if err := v.send(ctx, b); err != nil {
		return err
	}
	for i, l := range in.lines {
		if q.noItems == "" {
			in.found[2*i], in.found[2*i+1] = b[v.at[2*i]].Found, b[v.at[2*i+1]].Found
		}
		switch {
		case !in.found[2*i]:
			if err := v.rollback(ctx); err != nil {
				return err
			}
			t[tNewOrders]++
			t[tRollbacks]++
			return driver.ErrRollback
		case !in.found[2*i+1]:
			return v.abort(ctx, fmt.Errorf("no stock for item %d in warehouse %d", l.item, l.supplyW))
		}
	}

	b = b[:0]
	var total float64
	if q.noLines != "" {
		b = append(b, dbtarget.Query{SQL: q.noLines, Args: []any{oID, in.d, in.w, in.items, in.supplyW, in.qty}})
	}
	for i, l := range in.lines {
		amount := cents(float64(l.qty) * v.prices[i])
		if q.noLines == "" {
			b = append(b, dbtarget.Query{SQL: q.noLine, Args: []any{oID, in.d, in.w, i + 1, l.item, l.supplyW, l.qty, amount, v.dists[i]}})
		}
		total += amount
	}
	b = append(b, dbtarget.Query{SQL: q.commit})
	// The commit goes with the lines: a connection lost in this batch may
	// have taken the commit's answer, or the commit may never have left,
	// so the order is in doubt either way.
	if err := v.send(ctx, b); err != nil {
		return v.inDoubt(oID, err)
	}
	v.acked(oID)
	v.batch = b
	in.total = cents(total * (1 - discount) * (1 + wTax + dTax))
	t[tNewOrders]++
	t[tOrderLines] += int64(len(in.lines))
	t[tRemoteLines] += int64(in.remote)
	return nil
}

// queueLines adds each line's item read, and its stock read and update,
// to batch b, noting where each read is in v.at.
func (v *session) queueLines(b []dbtarget.Query) []dbtarget.Query {
	in, q, d := &v.no, &v.q, v.discard(2)
	v.at = slices.Grow(v.at[:0], 2*len(in.lines))[:2*len(in.lines)]
	for i, l := range in.lines {
		v.at[2*i] = len(b)
		b = append(b, dbtarget.Query{SQL: q.noItem, Args: []any{l.item}, Dest: []any{&v.prices[i], d[0], d[1]}, Optional: true})
		// s_quantity and s_data are shown, not used.
		v.at[2*i+1] = len(b)
		b = queueStep(b, q.noStock, []any{d[0], &v.dists[i], d[1]}, true, l.supplyW, l.item, l.qty, v.remote(l), in.d)
	}
	return b
}

// queueLineSets adds the items' read, the stock's and the stock's update,
// each one statement for all the lines, to batch b. Lines that repeat an
// item of a warehouse update their stock line by line instead, each seeing
// the one before it, as the set update would not.
func (v *session) queueLineSets(b []dbtarget.Query) []dbtarget.Query {
	in, q := &v.no, &v.q
	if in.itemRow == nil {
		in.itemRow, in.stockRow = v.itemRow, v.stockRow
	}
	args := []any{in.supplyW, in.items, in.d, in.qty, in.w}
	b = append(b,
		dbtarget.Query{SQL: q.noItems, Args: []any{in.items}, Each: in.itemRow},
		dbtarget.Query{SQL: q.noStocks.q, Args: args, Each: in.stockRow})
	if !in.repeats() {
		return append(b, dbtarget.Query{SQL: q.noStocks.write, Args: args})
	}
	// A dialect whose line step is a read and its write sends the write;
	// one whose step is an UPDATE that returns the row (the generic
	// no_stock) sends that and skips the row, which no_stocks has read.
	line, each := q.noStock.write, (func(dbtarget.Row) error)(nil)
	if line == "" {
		line, each = q.noStock.q, skipRow
	}
	for _, l := range in.lines {
		b = append(b, dbtarget.Query{SQL: line, Args: []any{l.supplyW, l.item, l.qty, v.remote(l), in.d}, Each: each})
	}
	return b
}

// skipRow reads past a row its statement returns.
func skipRow(dbtarget.Row) error { return nil }

// repeats says whether two lines have the same item and warehouse; sorted,
// such lines are next to each other.
func (in *newOrderInput) repeats() bool {
	for i := 1; i < len(in.lines); i++ {
		if in.lines[i].item == in.lines[i-1].item && in.lines[i].supplyW == in.lines[i-1].supplyW {
			return true
		}
	}
	return false
}

// itemRow takes a row of the items' set read: its line's price.
func (v *session) itemRow(r dbtarget.Row) error {
	in, d := &v.no, v.discard(2)
	if err := r.Scan(&in.row, &in.price, d[0], d[1]); err != nil {
		return err
	}
	i, err := in.line(in.row)
	if err == nil {
		v.prices[i], in.found[2*i] = in.price, true
	}
	return err
}

// stockRow takes a row of the stock's set read: its line's district
// info. s_quantity and s_data are shown, not used.
func (v *session) stockRow(r dbtarget.Row) error {
	in, d := &v.no, v.discard(2)
	if err := r.Scan(&in.row, d[0], &in.dist, d[1]); err != nil {
		return err
	}
	i, err := in.line(in.row)
	if err == nil {
		v.dists[i], in.found[2*i+1] = in.dist, true
	}
	return err
}

// line is the 0-based index of line n, 1-based, as a set read names it.
func (in *newOrderInput) line(n int) (int, error) {
	if n < 1 || n > len(in.lines) {
		return 0, fmt.Errorf("a set read returned line %d of %d", n, len(in.lines))
	}
	return n - 1, nil
}

// remote is 1 if line l is supplied by another warehouse.
func (v *session) remote(l orderLineInput) int {
	if l.supplyW != v.no.w {
		return 1
	}
	return 0
}

// newOrderProc is one call of tprocc_neword.
func (v *session) newOrderProc(ctx context.Context, t driver.Tally) error {
	in := &v.no
	var oID int
	err := v.S.QueryRow(ctx, v.q.callNewOrder, in.w, in.d, in.c, in.items, in.supplyW, in.qty, now()).Scan(&oID, &in.total)
	switch {
	case err == nil:
		v.acked(oID)
		t[tNewOrders]++
		t[tOrderLines] += int64(len(in.lines))
		t[tRemoteLines] += int64(in.remote)
		return nil
	// tprocc_neword asks for the intended rollback on the unused item.
	case v.T.Classify(err) == dbtarget.ErrUserRollback:
		t[tNewOrders]++
		t[tRollbacks]++
		return driver.ErrRollback
	}
	return v.inDoubt(0, err)
}
