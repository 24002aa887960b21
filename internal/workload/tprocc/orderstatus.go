package tprocc

import (
	"context"

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

func (v *vu) genOrderStatus() {
	in := &v.os
	in.w = v.warehouse()
	in.d = v.r.Int(1, districtsPerWH)
	in.byName, in.last, in.c = v.customer()
}

// orderStatusSQL is clause 2.6.2 as statements from the client: the
// customer, their last order and its lines, all only read.
func (v *vu) orderStatusSQL(ctx context.Context, t driver.Tally) error {
	in, q, s := &v.os, &v.q, v.S
	if err := v.begin(ctx, false); err != nil {
		return err
	}
	c := in.c
	if in.byName {
		var err error
		if c, err = v.middleCustomer(ctx, q.osCustomerByName, 5, in.w, in.d, in.last); err != nil {
			return v.abort(ctx, err)
		}
	} else if err := s.QueryRow(ctx, q.osCustomer, in.w, in.d, c).Scan(v.discard(4)...); err != nil {
		return v.abort(ctx, err)
	}
	var oID int
	d := v.discard(2)
	found, err := v.first(ctx, []any{&oID, d[0], d[1]}, q.osOrder, in.w, in.d, c)
	if err != nil {
		return v.abort(ctx, err)
	}
	in.lines = 0
	if found {
		rows, err := s.Query(ctx, q.osLines, in.w, in.d, oID)
		if err != nil {
			return v.abort(ctx, err)
		}
		for rows.Next() {
			if err := rows.Scan(v.discard(5)...); err != nil {
				rows.Close()
				return v.abort(ctx, err)
			}
			in.lines++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return v.abort(ctx, err)
		}
	}
	if err := v.commit(ctx); err != nil {
		return err
	}
	v.tallyOrderStatus(t)
	return nil
}

func (v *vu) tallyOrderStatus(t driver.Tally) {
	t[tCustomerSelects]++
	if v.os.byName {
		t[tByLastName]++
	}
}

// orderStatusProc is one call of tprocc_ostat.
func (v *vu) orderStatusProc(ctx context.Context, t driver.Tally) error {
	in := &v.os
	d := v.discard(2)
	if err := v.S.QueryRow(ctx, v.q.callOrderStatus, in.w, in.d, in.c, in.byName, in.last).Scan(d[0], d[1], &in.lines); err != nil {
		return err
	}
	v.tallyOrderStatus(t)
	return nil
}
