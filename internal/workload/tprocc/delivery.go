package tprocc

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
)

// deliveryInput is a Delivery's terminal input (clause 2.7.1).
type deliveryInput struct {
	w, carrier int
	// delivered is how many districts had an order to deliver.
	delivered int
	// Each district's order delivered, its customer and its lines' sum.
	order, customer [districtsPerWH]int
	sum             [districtsPerWH]float64
	// The districts with an order, their orders, their customers and their
	// sums in cents, as a dialect's set forms take them.
	ds, orders, customers, cents []int32
	// row, c and amount are what a set read's row holds.
	row, c int
	amount float64
}

func (v *session) genDelivery(tm *terminal) {
	v.dl.w = tm.warehouse()
	v.dl.carrier = tm.r.Int(1, 10)
}

// deliverySQL is clause 2.7.4 as statements from the client: the oldest
// undelivered order of each district, in one database transaction, in
// three batches, each one round trip where the target pipelines them:
// every district's oldest new order; those orders and their lines; the
// customers and the commit. Where the dialect has set forms (dl_orders,
// dl_order_lines, dl_customers), the orders, their lines and the customers
// are each one statement for every district. A district whose delete found
// nothing is looked at again alone, to tell a lost race from an empty
// district.
func (v *session) deliverySQL(ctx context.Context, _ driver.Tally) error {
	in, q := &v.dl, &v.q
	date := now()
	b := append(v.batch[:0], dbtarget.Query{SQL: q.beginWrite})
	var at [districtsPerWH]int
	for d := 1; d <= districtsPerWH; d++ {
		at[d-1] = len(b)
		b = queueStep(b, q.dlNewOrder, []any{&in.order[d-1]}, true, in.w, d)
	}
	if err := v.send(ctx, b); err != nil {
		return err
	}
	var found [districtsPerWH]bool
	for d := 1; d <= districtsPerWH; d++ {
		if found[d-1] = b[at[d-1]].Found; found[d-1] {
			continue
		}
		var err error
		if in.order[d-1], found[d-1], err = v.takeNewOrder(ctx, in.w, d); err != nil {
			return v.abort(ctx, err)
		}
	}

	if q.dlOrders.q != "" {
		b = v.queueDeliverySets(b[:0], found, date)
	} else {
		b = v.queueDeliveries(b[:0], found, date)
	}
	if err := v.send(ctx, b); err != nil {
		return err
	}
	if q.dlOrders.q != "" {
		for _, d := range in.ds {
			if in.customer[d-1] == 0 {
				return v.abort(ctx, fmt.Errorf("no order %d in district %d of warehouse %d", in.order[d-1], d, in.w))
			}
		}
	}

	b = b[:0]
	in.delivered = 0
	in.customers, in.cents = in.customers[:0], in.cents[:0]
	for d := 1; d <= districtsPerWH; d++ {
		if !found[d-1] {
			continue
		}
		in.delivered++
		if q.dlCustomers == "" {
			b = append(b, dbtarget.Query{SQL: q.dlCustomer, Args: []any{in.w, d, in.customer[d-1], cents(in.sum[d-1])}})
			continue
		}
		in.customers = append(in.customers, int32(in.customer[d-1]))
		in.cents = append(in.cents, int32(math.Round(in.sum[d-1]*100)))
	}
	if q.dlCustomers != "" && in.delivered > 0 {
		b = append(b, dbtarget.Query{SQL: q.dlCustomers, Args: []any{in.w, in.ds, in.customers, in.cents}})
	}
	b = append(b, dbtarget.Query{SQL: q.commit})
	// A connection lost with the commit leaves the Delivery in doubt.
	if err := v.send(ctx, b); err != nil {
		return v.Committing(err)
	}
	v.batch = b
	return nil
}

// queueDeliveries adds, for each district found with an order, the
// order's update and its lines', to batch b.
func (v *session) queueDeliveries(b []dbtarget.Query, found [districtsPerWH]bool, date time.Time) []dbtarget.Query {
	in, q := &v.dl, &v.q
	for d := 1; d <= districtsPerWH; d++ {
		if !found[d-1] {
			continue
		}
		in.sum[d-1] = 0
		sum := &in.sum[d-1]
		lines := []any{in.w, d, in.order[d-1], date}
		b = queueStep(b, q.dlOrder, []any{&in.customer[d-1]}, false, in.w, d, in.order[d-1], in.carrier)
		b = append(b, dbtarget.Query{SQL: q.dlLines.q, Args: lines, Each: func(r dbtarget.Row) error {
			var amount float64
			err := r.Scan(&amount)
			*sum += amount
			return err
		}})
		if q.dlLines.write != "" {
			b = append(b, dbtarget.Query{SQL: q.dlLines.write, Args: lines})
		}
	}
	return b
}

// queueDeliverySets adds the orders' update and their lines', each one
// statement (or a locking read and its write) for every district found
// with an order, to batch b. A district's customer stays 0 if its order
// was not read.
func (v *session) queueDeliverySets(b []dbtarget.Query, found [districtsPerWH]bool, date time.Time) []dbtarget.Query {
	in, q := &v.dl, &v.q
	in.ds, in.orders = in.ds[:0], in.orders[:0]
	for d := 1; d <= districtsPerWH; d++ {
		in.customer[d-1], in.sum[d-1] = 0, 0
		if found[d-1] {
			in.ds = append(in.ds, int32(d))
			in.orders = append(in.orders, int32(in.order[d-1]))
		}
	}
	if len(in.ds) == 0 {
		return b
	}
	args := []any{in.w, in.ds, in.orders, in.carrier, date}
	b = queueSplit(b, q.dlOrders, dbtarget.Query{Each: v.deliveredOrder}, args)
	return queueSplit(b, q.dlOrderLines, dbtarget.Query{Each: v.deliveredLine}, args)
}

// deliveredOrder takes a row of the orders' set read: its district's
// customer.
func (v *session) deliveredOrder(r dbtarget.Row) error {
	in := &v.dl
	i, err := in.district(r, &in.c)
	if err == nil {
		in.customer[i] = in.c
	}
	return err
}

// deliveredLine takes a row of the lines' set read: its amount, added to
// its district's sum.
func (v *session) deliveredLine(r dbtarget.Row) error {
	in := &v.dl
	i, err := in.district(r, &in.amount)
	if err == nil {
		in.sum[i] += in.amount
	}
	return err
}

// district scans a set read's row, its district and one column into dest,
// and returns the district's index.
func (in *deliveryInput) district(r dbtarget.Row, dest any) (int, error) {
	if err := r.Scan(&in.row, dest); err != nil {
		return 0, err
	}
	if in.row < 1 || in.row > districtsPerWH {
		return 0, fmt.Errorf("a set read returned district %d", in.row)
	}
	return in.row - 1, nil
}

// takeNewOrder deletes the district's oldest new order and returns its
// number, or ok false if the district has none. A concurrent Delivery that
// deleted the same row first makes the delete match nothing; then, unless
// the district is empty, it tries the next oldest.
func (v *session) takeNewOrder(ctx context.Context, w, d int) (oID int, ok bool, err error) {
	for {
		ok, err = v.first(ctx, []any{&oID}, v.q.dlNewOrder.q, w, d)
		if ok && err == nil {
			err = v.write(ctx, v.q.dlNewOrder, []any{w, d})
		}
		if ok || err != nil {
			return oID, ok, err
		}
		pending, err := v.first(ctx, v.discard(1), v.q.dlPending, w, d)
		if !pending || err != nil {
			return 0, false, err
		}
	}
}

// deliveryProc is one call of tprocc_delivery.
func (v *session) deliveryProc(ctx context.Context, _ driver.Tally) error {
	in := &v.dl
	return v.Committing(v.S.QueryRow(ctx, v.q.callDelivery, in.w, in.carrier, now()).Scan(&in.delivered))
}
