package tprocc

import (
	"context"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
)

// orderStatusInput is an Order-Status's terminal input (clause 2.6.1).
type orderStatusInput struct {
	w, d   int
	byName bool
	last   string // with byName
	c      int    // without byName
	// lines is how many order lines the customer's last order has, as the
	// terminal would show them.
	lines int
}

func (v *session) genOrderStatus(tm *terminal) {
	in := &v.os
	in.w = tm.warehouse()
	in.d = tm.r.Int(1, districtsPerWH)
	in.byName, in.last, in.c = v.customer(tm)
}

// orderStatusSQL is clause 2.6.2 as statements from the client: the
// customer, their last order and its lines, all only read, in batches
// that each take one round trip where the target pipelines them.
func (v *session) orderStatusSQL(ctx context.Context, t driver.Tally) error {
	in, q := &v.os, &v.q
	b := append(v.batch[:0], dbtarget.Query{SQL: q.beginRead})
	c := in.c
	if in.byName {
		b = append(b, v.customersNamed(q.osCustomerByName, 5, in.w, in.d, in.last))
		if err := v.send(ctx, b); err != nil {
			return err
		}
		var err error
		if c, err = v.middle(in.w, in.d, in.last); err != nil {
			return v.abort(ctx, err)
		}
		b = b[:0]
	} else {
		b = append(b, dbtarget.Query{SQL: q.osCustomer, Args: []any{in.w, in.d, c}, Dest: v.discard(4)})
	}
	var oID int
	d := v.discard(2)
	b = append(b, dbtarget.Query{SQL: q.osOrder, Args: []any{in.w, in.d, c}, Dest: []any{&oID, d[0], d[1]}, Optional: true})
	if err := v.send(ctx, b); err != nil {
		return err
	}
	found := b[len(b)-1].Found
	b = b[:0]
	in.lines = 0
	if found {
		b = append(b, dbtarget.Query{SQL: q.osLines, Args: []any{in.w, in.d, oID}, Each: func(r dbtarget.Row) error {
			in.lines++
			return r.Scan(v.discard(5)...)
		}})
	}
	b = append(b, dbtarget.Query{SQL: q.commit})
	if err := v.send(ctx, b); err != nil {
		return err
	}
	v.batch = b
	v.tallyOrderStatus(t)
	return nil
}

func (v *session) tallyOrderStatus(t driver.Tally) {
	t[tCustomerSelects]++
	if v.os.byName {
		t[tByLastName]++
	}
}

// orderStatusProc is one call of tprocc_ostat.
func (v *session) orderStatusProc(ctx context.Context, t driver.Tally) error {
	in := &v.os
	d := v.discard(2)
	if err := v.S.QueryRow(ctx, v.q.callOrderStatus, in.w, in.d, in.c, in.byName, in.last).Scan(d[0], d[1], &in.lines); err != nil {
		return err
	}
	v.tallyOrderStatus(t)
	return nil
}
