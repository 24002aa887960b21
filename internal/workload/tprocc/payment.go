package tprocc

import (
	"context"
	"fmt"

	"github.com/dbrig/dbrig/internal/driver"
)

// paymentInput is a Payment's terminal input (clause 2.5.1).
type paymentInput struct {
	w, d   int
	cw, cd int // the customer's warehouse and district
	byName bool
	last   string // with byName
	c      int    // without byName
	amount float64
}

func (v *vu) genPayment() {
	in := &v.pay
	in.w = v.warehouse()
	in.d = v.r.Int(1, districtsPerWH)
	in.cw, in.cd = in.w, in.d
	if v.remotePay.Deal() == 1 && v.cfg.Warehouses > 1 {
		in.cd = v.r.Int(1, districtsPerWH)
		in.cw = v.otherWarehouse(in.w)
	}
	in.byName, in.last, in.c = v.customer()
	in.amount = v.r.Money(100, 500000)
}

// paymentSQL is clause 2.5.2 as statements from the client.
func (v *vu) paymentSQL(ctx context.Context, t driver.Tally) error {
	in, q, s := &v.pay, &v.q, v.S
	date := now()
	if err := v.begin(ctx, true); err != nil {
		return err
	}
	// Beyond the names, the addresses are shown, not used.
	var wName, dName string
	a := v.discard(5)
	if err := v.row(ctx, q.payWarehouse, []any{&wName, a[0], a[1], a[2], a[3], a[4]}, in.w, in.amount); err != nil {
		return v.abort(ctx, err)
	}
	if err := v.row(ctx, q.payDistrict, []any{&dName, a[0], a[1], a[2], a[3], a[4]}, in.w, in.d, in.amount); err != nil {
		return v.abort(ctx, err)
	}
	c := in.c
	if in.byName {
		var err error
		if c, err = v.middleCustomer(ctx, q.payCustomerByName, 1, in.cw, in.cd, in.last); err != nil {
			return v.abort(ctx, err)
		}
	}
	// What a bad-credit customer's c_data gets in front (clause 2.5.2.2).
	prefix := fmt.Sprintf("%d %d %d %d %d %.2f ", c, in.cd, in.cw, in.d, in.w, in.amount)
	if err := v.row(ctx, q.payCustomer, v.discard(15), in.cw, in.cd, c, in.amount, prefix); err != nil {
		return v.abort(ctx, err)
	}
	if _, err := s.Exec(ctx, q.payHistory, c, in.cd, in.cw, in.d, in.w, date, in.amount, wName+"    "+dName); err != nil {
		return v.abort(ctx, err)
	}
	if err := v.commit(ctx); err != nil {
		return err
	}
	v.tallyPayment(t)
	return nil
}

// middleCustomer finds, of the customers with that last name in c_first
// order, the one at position ceil(n/2) (clause 2.5.2.2). The query returns
// cols columns, c_id first; the others are shown, not used.
func (v *vu) middleCustomer(ctx context.Context, sql string, cols int, w, d int, last string) (int, error) {
	rows, err := v.S.Query(ctx, sql, w, d, last)
	if err != nil {
		return 0, err
	}
	var id int
	var dest [sinkSize]any
	copy(dest[1:cols], v.discard(cols-1))
	dest[0] = &id
	ids := v.ids[:0]
	for rows.Next() {
		if err := rows.Scan(dest[:cols]...); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	v.ids = ids
	if len(ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in district %d of warehouse %d", last, d, w)
	}
	return ids[(len(ids)+1)/2-1], nil
}

func (v *vu) tallyPayment(t driver.Tally) {
	in := &v.pay
	t[tPayments]++
	if in.cw != in.w {
		t[tRemotePayments]++
	}
	t[tCustomerSelects]++
	if in.byName {
		t[tByLastName]++
	}
}

// paymentProc is one call of tprocc_payment.
func (v *vu) paymentProc(ctx context.Context, t driver.Tally) error {
	in := &v.pay
	d := v.discard(2)
	err := v.S.QueryRow(ctx, v.q.callPayment, in.w, in.d, in.cw, in.cd, in.c, in.byName, in.last, in.amount, now()).Scan(d[0], d[1])
	if err != nil {
		return err
	}
	v.tallyPayment(t)
	return nil
}
