package tprocc

import (
	"context"

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
}

func (v *session) genDelivery(tm *terminal) {
	v.dl.w = tm.warehouse()
	v.dl.carrier = tm.r.Int(1, 10)
}

// deliverySQL is clause 2.7.4 as statements from the client: the oldest
// undelivered order of each district, in one database transaction, in
// three batches, each one round trip where the target pipelines them:
// every district's oldest new order; those orders and their lines; the
// customers and the commit. A district whose delete found nothing is
// looked at again alone, to tell a lost race from an empty district.
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

	b = b[:0]
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
	if err := v.send(ctx, b); err != nil {
		return err
	}

	b = b[:0]
	in.delivered = 0
	for d := 1; d <= districtsPerWH; d++ {
		if found[d-1] {
			b = append(b, dbtarget.Query{SQL: q.dlCustomer, Args: []any{in.w, d, in.customer[d-1], cents(in.sum[d-1])}})
			in.delivered++
		}
	}
	b = append(b, dbtarget.Query{SQL: q.commit})
	if err := v.send(ctx, b); err != nil {
		return err
	}
	v.batch = b
	return nil
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
	return v.S.QueryRow(ctx, v.q.callDelivery, in.w, in.carrier, now()).Scan(&in.delivered)
}
