package workload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/target"
)

// Fresh is a build on a target cleared for it: what is in the way goes
// first, and what a failed build made goes after it.
type Fresh struct {
	// Name is the workload's.
	Name string
	// Force drops a schema already there instead of refusing.
	Force bool
	// Found is what reading the build's record gave: ErrNoSchema where
	// there is none, nil for a finished schema (Have says what it is),
	// or another error for something in the way.
	Found error
	Have  string
	Drop  func(context.Context, target.Target) error
}

// Build runs build on t once the way is clear, and times it. A failed
// build's partial schema is dropped, even when ctx is what failed, so no
// half-built schema is left behind.
func (f Fresh) Build(ctx context.Context, t target.Target, build func() (BuildSummary, error)) (BuildSummary, error) {
	began := time.Now()
	switch {
	case errors.Is(f.Found, ErrNoSchema):
	case !f.Force && f.Found == nil:
		return BuildSummary{}, target.Userf("%s already exists on %s: use --force to drop and rebuild it, or `dbrig drop %s --target %s`", f.Have, t.URL(), f.Name, t.URL())
	case !f.Force:
		return BuildSummary{}, f.Found
	default:
		if err := f.Drop(ctx, t); err != nil {
			return BuildSummary{}, err
		}
	}
	sum, err := build()
	if err != nil {
		if derr := f.Drop(context.WithoutCancel(ctx), t); derr != nil {
			err = fmt.Errorf("%w (and dropping the partial schema failed too: %v)", err, derr)
		}
		return sum, err
	}
	sum.Seconds = time.Since(began).Seconds()
	return sum, nil
}
