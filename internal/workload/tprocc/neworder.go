package tprocc

import (
	"cmp"
	"context"
	"slices"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/target"
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

func (v *vu) genNewOrder() {
	in := &v.no
	in.w = v.warehouse()
	in.d = v.r.Int(1, districtsPerWH)
	in.c = v.r.NURand(1023, 1, customersPerDist, v.cfg.C.ID)
	n := v.r.Int(minOrderLines, maxOrderLines)
	in.rollback = v.rollbacks.Deal() == 1
	in.lines = in.lines[:0]
	in.remote = 0
	for i := range n {
		l := orderLineInput{item: v.r.NURand(8191, 1, items, v.cfg.C.ItemID), supplyW: in.w}
		if in.rollback && i == n-1 {
			l.item = unusedItem
		}
		if v.cfg.Warehouses > 1 && v.remoteLine.Deal() == 1 {
			l.supplyW = v.otherWarehouse(in.w)
			in.remote++
		}
		l.qty = v.r.Int(1, 10)
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

// newOrderSQL is clause 2.4.2 as statements from the client.
func (v *vu) newOrderSQL(ctx context.Context, t driver.Tally) error {
	in, q, s := &v.no, &v.q, v.S
	entry := now()
	if err := v.begin(ctx, true); err != nil {
		return err
	}
	var oID int
	var dTax, wTax, discount float64
	if err := v.row(ctx, q.noDistrict, []any{&dTax, &oID}, in.w, in.d); err != nil {
		return v.abort(ctx, err)
	}
	// c_last and c_credit are shown, not used.
	d := v.discard(2)
	if err := s.QueryRow(ctx, q.noCustomer, in.w, in.d, in.c).Scan(&discount, d[0], d[1], &wTax); err != nil {
		return v.abort(ctx, err)
	}
	allLocal := 0
	if in.remote == 0 {
		allLocal = 1
	}
	if _, err := s.Exec(ctx, q.noOrder, oID, in.d, in.w, in.c, entry, len(in.lines), allLocal); err != nil {
		return v.abort(ctx, err)
	}
	if _, err := s.Exec(ctx, q.noNewOrder, oID, in.d, in.w); err != nil {
		return v.abort(ctx, err)
	}
	var price, total float64
	var dist string
	for i, l := range in.lines {
		found, err := v.first(ctx, []any{&price, d[0], d[1]}, q.noItem, l.item)
		if err != nil {
			return v.abort(ctx, err)
		}
		if !found {
			if err := v.rollback(ctx); err != nil {
				return err
			}
			t[tNewOrders]++
			t[tRollbacks]++
			return driver.ErrRollback
		}
		remote := 0
		if l.supplyW != in.w {
			remote = 1
		}
		// s_quantity and s_data are shown, not used.
		if err := v.row(ctx, q.noStock, []any{d[0], &dist, d[1]}, l.supplyW, l.item, l.qty, remote, in.d); err != nil {
			return v.abort(ctx, err)
		}
		amount := cents(float64(l.qty) * price)
		if _, err := s.Exec(ctx, q.noLine, oID, in.d, in.w, i+1, l.item, l.supplyW, l.qty, amount, dist); err != nil {
			return v.abort(ctx, err)
		}
		total += amount
	}
	if err := v.commit(ctx); err != nil {
		return err
	}
	in.total = cents(total * (1 - discount) * (1 + wTax + dTax))
	t[tNewOrders]++
	t[tOrderLines] += int64(len(in.lines))
	t[tRemoteLines] += int64(in.remote)
	return nil
}

// newOrderProc is one call of tprocc_neword.
func (v *vu) newOrderProc(ctx context.Context, t driver.Tally) error {
	in := &v.no
	var oID int
	err := v.S.QueryRow(ctx, v.q.callNewOrder, in.w, in.d, in.c, in.items, in.supplyW, in.qty, now()).Scan(&oID, &in.total)
	switch {
	case err == nil:
		t[tNewOrders]++
		t[tOrderLines] += int64(len(in.lines))
		t[tRemoteLines] += int64(in.remote)
		return nil
	// tprocc_neword asks for the intended rollback on the unused item.
	case v.T.Classify(err) == target.ErrUserRollback:
		t[tNewOrders]++
		t[tRollbacks]++
		return driver.ErrRollback
	}
	return err
}
