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
	// The lines as the routine takes them.
	items, supplyW, qty []int32
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
	if v.procs {
		in.items, in.supplyW, in.qty = in.items[:0], in.supplyW[:0], in.qty[:0]
		for _, l := range in.lines {
			in.items = append(in.items, int32(l.item))
			in.supplyW = append(in.supplyW, int32(l.supplyW))
			in.qty = append(in.qty, int32(l.qty))
		}
	}
}

// newOrderSQL is clause 2.4.2 as statements from the client, in three
// batches, each one round trip where the target pipelines them: the
// district and the customer; the order, its new-order row and each
// line's item and stock; the order lines and the commit. No statement
// needs the result of another in its own batch. An unused item is found
// as the clause finds it, with every line's work done before the rollback.
func (v *session) newOrderSQL(ctx context.Context, t driver.Tally) error {
	in, q := &v.no, &v.q
	entry := now()
	var oID int
	var dTax, wTax, discount float64
	d := v.discard(2)
	b := append(v.batch[:0], dbtarget.Query{SQL: q.beginWrite})
	b = queueStep(b, q.noDistrict, []any{&dTax, &oID}, false, in.w, in.d)
	// c_last and c_credit are shown, not used.
	b = append(b, dbtarget.Query{SQL: q.noCustomer, Args: []any{in.w, in.d, in.c}, Dest: []any{&discount, d[0], d[1], &wTax}})
	if err := v.send(ctx, b); err != nil {
		return err
	}

	allLocal := 0
	if in.remote == 0 {
		allLocal = 1
	}
	b = append(b[:0],
		dbtarget.Query{SQL: q.noOrder, Args: []any{oID, in.d, in.w, in.c, entry, len(in.lines), allLocal}},
		dbtarget.Query{SQL: q.noNewOrder, Args: []any{oID, in.d, in.w}})
	n := len(in.lines)
	v.prices, v.dists = slices.Grow(v.prices[:0], n)[:n], slices.Grow(v.dists[:0], n)[:n]
	v.at = slices.Grow(v.at[:0], 2*n)[:2*n]
	for i, l := range in.lines {
		remote := 0
		if l.supplyW != in.w {
			remote = 1
		}
		v.at[2*i] = len(b)
		b = append(b, dbtarget.Query{SQL: q.noItem, Args: []any{l.item}, Dest: []any{&v.prices[i], d[0], d[1]}, Optional: true})
		// s_quantity and s_data are shown, not used.
		v.at[2*i+1] = len(b)
		b = queueStep(b, q.noStock, []any{d[0], &v.dists[i], d[1]}, true, l.supplyW, l.item, l.qty, remote, in.d)
	}
	if err := v.send(ctx, b); err != nil {
		return err
	}
	for i, l := range in.lines {
		switch {
		case !b[v.at[2*i]].Found:
			if err := v.rollback(ctx); err != nil {
				return err
			}
			t[tNewOrders]++
			t[tRollbacks]++
			return driver.ErrRollback
		case !b[v.at[2*i+1]].Found:
			return v.abort(ctx, fmt.Errorf("no stock for item %d in warehouse %d", l.item, l.supplyW))
		}
	}

	b = b[:0]
	var total float64
	for i, l := range in.lines {
		amount := cents(float64(l.qty) * v.prices[i])
		b = append(b, dbtarget.Query{SQL: q.noLine, Args: []any{oID, in.d, in.w, i + 1, l.item, l.supplyW, l.qty, amount, v.dists[i]}})
		total += amount
	}
	b = append(b, dbtarget.Query{SQL: q.commit})
	// The commit goes with the lines: a connection lost in this batch may
	// have taken the commit's answer, or the commit may never have left,
	// so the order is in doubt either way.
	if err := v.send(ctx, b); err != nil {
		v.inDoubt(oID, err)
		return err
	}
	v.acked(oID)
	v.batch = b
	in.total = cents(total * (1 - discount) * (1 + wTax + dTax))
	t[tNewOrders]++
	t[tOrderLines] += int64(len(in.lines))
	t[tRemoteLines] += int64(in.remote)
	return nil
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
	v.inDoubt(0, err)
	return err
}
