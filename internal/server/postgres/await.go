//go:build unix

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// giveUp wraps the reason that ends a wait at once: what it waits for
// cannot come (the process that would bring it ended).
type giveUp struct{ error }

// await calls try every interval until it is done, for up to limit or
// until ctx ends, and then returns the reason try gave last for not being
// done; a reason wrapped in giveUp returns at once.
func await(ctx context.Context, limit, interval time.Duration, try func() (done bool, why error)) error {
	deadline := time.Now().Add(limit)
	for {
		done, why := try()
		var stop giveUp
		switch {
		case done:
			return nil
		case errors.As(why, &stop):
			return stop.error
		case time.Now().After(deadline) || ctx.Err() != nil:
			if why == nil {
				why = fmt.Errorf("not done within %s", limit)
			}
			return why
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}
