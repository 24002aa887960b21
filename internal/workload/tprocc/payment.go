package tprocc

import (
	"context"
	"fmt"

	"github.com/dbrig/dbrig/internal/dbtarget"
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

func (v *session) genPayment(tm *terminal) {
	in := &v.pay
	in.w = tm.warehouse()
	in.d = tm.r.Int(1, districtsPerWH)
	in.cw, in.cd = in.w, in.d
	if v.remotePay.Deal(&tm.r) == 1 && v.cfg.Warehouses > 1 {
		in.cd = tm.r.Int(1, districtsPerWH)
		in.cw = tm.otherWarehouse(in.w)
	}
	in.byName, in.last, in.c = v.customer(tm)
	in.amount = tm.r.Money(100, 500000)
}

// paymentSQL is clause 2.5.2 as statements from the client, in two
// batches, each one round trip where the target pipelines them: the
// warehouse, the district (one read of both where the dialect has
// pay_warehouse_district) and, by name, the customers of that name; then
// the customer, the history row and the commit. Where the dialect has
// pay_history_named, whose history row takes the names from the
// warehouse's and the district's rows, a customer chosen by id needs no
// answer in between, and the two batches are one.
func (v *session) paymentSQL(ctx context.Context, t driver.Tally) error {
	in, q := &v.pay, &v.q
	date := now()
	// Beyond the names, the addresses are shown, not used.
	var wName, dName string
	a := v.discard(5)
	b := append(v.batch[:0], dbtarget.Query{SQL: q.beginWrite})
	if q.payWarehouseDistrict != "" {
		b = append(b,
			dbtarget.Query{SQL: q.payWarehouseDistrict, Args: []any{in.w, in.d},
				Dest: []any{&wName, a[0], a[1], a[2], a[3], a[4], &dName, a[0], a[1], a[2], a[3], a[4]}},
			dbtarget.Query{SQL: q.payWarehouse.write, Args: []any{in.w, in.amount}},
			dbtarget.Query{SQL: q.payDistrict.write, Args: []any{in.w, in.d, in.amount}})
	} else {
		b = queueStep(b, q.payWarehouse, []any{&wName, a[0], a[1], a[2], a[3], a[4]}, false, in.w, in.amount)
		b = queueStep(b, q.payDistrict, []any{&dName, a[0], a[1], a[2], a[3], a[4]}, false, in.w, in.d, in.amount)
	}
	c := in.c
	if in.byName {
		b = append(b, v.customersNamed(q.payCustomerByName, 1, in.cw, in.cd, in.last))
	}
	if in.byName || q.payHistoryNamed == "" {
		if err := v.send(ctx, b); err != nil {
			return err
		}
		b = b[:0]
	}
	if in.byName {
		var err error
		if c, err = v.middle(in.cw, in.cd, in.last); err != nil {
			return v.abort(ctx, err)
		}
	}
	// What a bad-credit customer's c_data gets in front (clause 2.5.2.2).
	prefix := fmt.Sprintf("%d %d %d %d %d %.2f ", c, in.cd, in.cw, in.d, in.w, in.amount)
	b = queueStep(b, q.payCustomer, v.discard(15), false, in.cw, in.cd, c, in.amount, prefix)
	// h_data is the warehouse's and the district's names, which
	// pay_history_named takes from their rows.
	history := dbtarget.Query{SQL: q.payHistoryNamed, Args: []any{c, in.cd, in.cw, in.d, in.w, date, in.amount}}
	if q.payHistoryNamed == "" {
		history = dbtarget.Query{SQL: q.payHistory, Args: append(history.Args, wName+"    "+dName)}
	}
	b = append(b, history, dbtarget.Query{SQL: q.commit})
	// The commit goes with the customer and the history row: a
	// connection lost in this batch leaves the Payment in doubt.
	if err := v.send(ctx, b); err != nil {
		return v.Committing(err)
	}
	v.batch = b
	v.tallyPayment(t)
	return nil
}

// middleCustomer finds, of the customers with that last name in c_first
// order, the one at position ceil(n/2) (clause 2.5.2.2). The query returns
// cols columns, c_id first; the others are shown, not used.
func (v *session) middleCustomer(ctx context.Context, sql string, cols int, w, d int, last string) (int, error) {
	if err := dbtarget.RunBatch(ctx, v.S, []dbtarget.Query{v.customersNamed(sql, cols, w, d, last)}); err != nil {
		return 0, err
	}
	return v.middle(w, d, last)
}

// customersNamed is the query for the customers with that last name, in c_first
// order, collecting their ids for middle. The query returns cols columns,
// c_id first; the others are shown, not used.
func (v *session) customersNamed(sql string, cols int, w, d int, last string) dbtarget.Query {
	var id int
	dest := make([]any, cols)
	copy(dest[1:], v.discard(cols-1))
	dest[0] = &id
	v.ids = v.ids[:0]
	return dbtarget.Query{SQL: sql, Args: []any{w, d, last}, Each: func(r dbtarget.Row) error {
		if err := r.Scan(dest...); err != nil {
			return err
		}
		v.ids = append(v.ids, id)
		return nil
	}}
}

// middle is the customer at position ceil(n/2) of those customersNamed found
// (clause 2.5.2.2).
func (v *session) middle(w, d int, last string) (int, error) {
	if len(v.ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in district %d of warehouse %d", last, d, w)
	}
	return v.ids[(len(v.ids)+1)/2-1], nil
}

func (v *session) tallyPayment(t driver.Tally) {
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
func (v *session) paymentProc(ctx context.Context, t driver.Tally) error {
	in := &v.pay
	d := v.discard(2)
	err := v.S.QueryRow(ctx, v.q.callPayment, in.w, in.d, in.cw, in.cd, in.c, in.byName, in.last, in.amount, now()).Scan(d[0], d[1])
	if err != nil {
		return v.Committing(err)
	}
	v.tallyPayment(t)
	return nil
}
