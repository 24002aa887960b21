package dbtarget

import (
	"context"
	"fmt"
	"time"
)

// ReconnectLimit is how long Reconnecting keeps reopening a lost
// connection: long enough for a server to restart and recover from a
// crash, short enough that a server that stays down ends the wait with
// an error rather than a hang.
const ReconnectLimit = 30 * time.Second

// Reconnecting runs op and, if it fails because the connection was lost
// (classify says ErrConnLost), reopens the connection and runs op once
// more. The first reopen is immediate, so a connection dropped by a server
// that is already back costs one round trip; failed reopens back off from
// 100 ms to 5 s, as the driver's virtual users do. It gives up when ctx
// ends or ReconnectLimit has passed since the connection was lost, with
// the last error from reopening.
func Reconnecting(ctx context.Context, classify func(error) ErrClass, reopen, op func(context.Context) error) error {
	err := op(ctx)
	if err == nil || classify(err) != ErrConnLost {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, ReconnectLimit,
		fmt.Errorf("connection not regained within %s", ReconnectLimit))
	defer cancel()
	backoff := 100 * time.Millisecond
	for {
		// On a connection just opened, another failure is not a lost
		// connection's: the error may only look like one (anything that is
		// not the server's own), and retrying it would spin until the limit.
		if err = reopen(ctx); err == nil {
			return op(ctx)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", context.Cause(ctx), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
