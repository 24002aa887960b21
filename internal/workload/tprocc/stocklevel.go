package tprocc

import (
	"context"

	"github.com/dbrig/dbrig/internal/driver"
)

// stockLevelInput is a Stock-Level's terminal input (clause 2.8.1); the
// district is the virtual user's own.
type stockLevelInput struct {
	w, d, threshold int
	// low is the count of items below the threshold.
	low int
}

func (v *vu) genStockLevel() {
	v.sl.w = v.warehouse()
	v.sl.d = v.slevD
	v.sl.threshold = v.r.Int(10, 20)
}

// stockLevelSQL is clause 2.8.2 as statements from the client.
func (v *vu) stockLevelSQL(ctx context.Context, _ driver.Tally) error {
	in, q, s := &v.sl, &v.q, v.S
	if err := v.begin(ctx, false); err != nil {
		return err
	}
	var next int
	if err := s.QueryRow(ctx, q.slDistrict, in.w, in.d).Scan(&next); err != nil {
		return v.abort(ctx, err)
	}
	if err := s.QueryRow(ctx, q.slCount, in.w, in.d, next, in.threshold).Scan(&in.low); err != nil {
		return v.abort(ctx, err)
	}
	return v.commit(ctx)
}

// stockLevelProc is one call of tprocc_slev.
func (v *vu) stockLevelProc(ctx context.Context, _ driver.Tally) error {
	in := &v.sl
	return v.S.QueryRow(ctx, v.q.callStockLevel, in.w, in.d, in.threshold).Scan(&in.low)
}
