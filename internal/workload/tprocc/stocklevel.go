package tprocc

import (
	"context"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
)

// stockLevelInput is a Stock-Level's terminal input (clause 2.8.1); the
// district is the virtual user's own.
type stockLevelInput struct {
	w, d, threshold int
	// low is the count of items below the threshold.
	low int
}

func (v *session) genStockLevel(tm *terminal) {
	v.sl.w = tm.warehouse()
	v.sl.d = tm.slevD
	v.sl.threshold = tm.r.Int(10, 20)
}

// stockLevelSQL is clause 2.8.2 as statements from the client, in two
// batches, each one round trip where the target pipelines them.
func (v *session) stockLevelSQL(ctx context.Context, _ driver.Tally) error {
	in, q := &v.sl, &v.q
	var next int
	b := append(v.batch[:0], dbtarget.Query{SQL: q.beginRead},
		dbtarget.Query{SQL: q.slDistrict, Args: []any{in.w, in.d}, Dest: []any{&next}})
	if err := v.send(ctx, b); err != nil {
		return err
	}
	b = append(b[:0], dbtarget.Query{SQL: q.slCount, Args: []any{in.w, in.d, next, in.threshold}, Dest: []any{&in.low}},
		dbtarget.Query{SQL: q.commit})
	if err := v.send(ctx, b); err != nil {
		return err
	}
	v.batch = b
	return nil
}

// stockLevelProc is one call of tprocc_slev.
func (v *session) stockLevelProc(ctx context.Context, _ driver.Tally) error {
	in := &v.sl
	return v.S.QueryRow(ctx, v.q.callStockLevel, in.w, in.d, in.threshold).Scan(&in.low)
}
