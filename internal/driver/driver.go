// Package driver runs virtual users against a workload: it owns ramp-up,
// the measured window, pacing, retries, error counting, latency histograms
// and progress. It knows nothing about what a transaction does.
package driver

import (
	"context"
	"errors"
	"time"
)

// Workload is what the driver drives.
type Workload interface {
	// TxNames names the transaction types; a VU's Next returns an index into it.
	TxNames() []string
	// TallyNames names the workload's own per-transaction counters, which
	// the driver sums over the measured window only.
	TallyNames() []string
	// NewVU opens virtual user id (0-based) with its own connection.
	NewVU(ctx context.Context, id int) (VU, error)
}

// VU is one virtual user.
type VU interface {
	// Next picks the next transaction type and generates its inputs.
	Next() int
	// Run runs the transaction chosen by Next. After a retryable error the
	// driver calls Run again with the same inputs. It adds its own counters
	// into t, which holds one slot per TallyNames entry; ErrRollback reports
	// an expected, intended rollback, and ErrAbort a result that makes the
	// whole run worthless.
	Run(ctx context.Context, tx int, t Tally) error
	// Reconnect replaces a lost connection.
	Reconnect(ctx context.Context) error
	Close() error
}

// Pacer is a VU that waits around its transactions: before and after a
// transaction of type tx (zero for no wait).
type Pacer interface {
	Pacing(tx int) (before, after time.Duration)
}

// Flusher is a VU whose work reaches the database's own counters late.
// Flush publishes it, so that the counters read next hold all the VU has
// done. The driver calls it as the VU opens, and at each edge of the
// measured window, between two transactions, while every VU waits for
// the edge to be read: so the database counts on each side of an edge
// exactly the transactions the client does.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Tally is a workload's per-transaction counters, one slot per TallyNames entry.
type Tally []int64

// Add sums o into t.
func (t Tally) Add(o Tally) {
	for i := range t {
		t[i] += o[i]
	}
}

// ErrRollback is returned by Run when the transaction rolled back as the
// workload intends. It counts as a completed transaction, not an error.
var ErrRollback = errors.New("user rollback")

// ErrAbort, wrapped in the error Run returns, ends the whole run with that
// error: the transaction showed that no figure of the run can be trusted
// (a computation that returned the wrong value, say).
var ErrAbort = errors.New("run aborted")
