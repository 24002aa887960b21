package dbtarget

import "context"

// Settler is a Target whose server carries work over from one run into
// the next (old row versions to purge, dirty pages to write) and can
// finish it on demand, so that every point of a sweep starts from the
// same state instead of paying for the point before it. A sweep settles
// the target before each run.
type Settler interface {
	// Settle waits until the carried-over work is done, restores any
	// setting it changed to get there, and says in one line what it did.
	Settle(ctx context.Context) (string, error)
}
