package tprocc

import (
	"context"

	"github.com/dbrig/dbrig/internal/driver"
)

// deliveryInput is a Delivery's terminal input (clause 2.7.1).
type deliveryInput struct {
	w, carrier int
	// delivered is how many districts had an order to deliver.
	delivered int
}

func (v *vu) genDelivery() {
	v.dl.w = v.warehouse()
	v.dl.carrier = v.r.Int(1, 10)
}

// deliverySQL is clause 2.7.4 as statements from the client: the oldest
// undelivered order of each district, in one database transaction.
func (v *vu) deliverySQL(ctx context.Context, _ driver.Tally) error {
	in, q, s := &v.dl, &v.q, v.S
	date := now()
	if err := v.begin(ctx, true); err != nil {
		return err
	}
	in.delivered = 0
	for d := 1; d <= districtsPerWH; d++ {
		oID, ok, err := v.takeNewOrder(ctx, in.w, d)
		if err != nil {
			return v.abort(ctx, err)
		}
		if !ok {
			continue
		}
		var c int
		if err := v.row(ctx, q.dlOrder, []any{&c}, in.w, d, oID, in.carrier); err != nil {
			return v.abort(ctx, err)
		}
		lines := []any{in.w, d, oID, date}
		rows, err := s.Query(ctx, q.dlLines.q, lines...)
		if err != nil {
			return v.abort(ctx, err)
		}
		var sum, amount float64
		for rows.Next() {
			if err := rows.Scan(&amount); err != nil {
				rows.Close()
				return v.abort(ctx, err)
			}
			sum += amount
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return v.abort(ctx, err)
		}
		if err := v.write(ctx, q.dlLines, lines); err != nil {
			return v.abort(ctx, err)
		}
		if _, err := s.Exec(ctx, q.dlCustomer, in.w, d, c, cents(sum)); err != nil {
			return v.abort(ctx, err)
		}
		in.delivered++
	}
	return v.commit(ctx)
}

// takeNewOrder deletes the district's oldest new order and returns its
// number, or ok false if the district has none. A concurrent Delivery that
// deleted the same row first makes the delete match nothing; then, unless
// the district is empty, it tries the next oldest.
func (v *vu) takeNewOrder(ctx context.Context, w, d int) (oID int, ok bool, err error) {
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
func (v *vu) deliveryProc(ctx context.Context, _ driver.Tally) error {
	in := &v.dl
	return v.S.QueryRow(ctx, v.q.callDelivery, in.w, in.carrier, now()).Scan(&in.delivered)
}
