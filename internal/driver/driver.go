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
	// TallyNames names the workload's own per-transaction counters (at most
	// MaxTally), which the driver sums over the measured window only.
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
	// into t; ErrRollback reports an expected, intended rollback.
	Run(ctx context.Context, tx int, t *Tally) error
	// Pacing is the keying time before, and the think time after, a
	// transaction of type tx; asked only when keying and thinking are on.
	Pacing(tx int) (keying, think time.Duration)
	// Reconnect replaces a lost connection.
	Reconnect(ctx context.Context) error
	Close() error
}

// MaxTally bounds TallyNames so a Tally is a fixed array, free to copy.
const MaxTally = 8

// Tally is a workload's per-transaction counters.
type Tally [MaxTally]int64

// Add sums o into t.
func (t *Tally) Add(o *Tally) {
	for i := range t {
		t[i] += o[i]
	}
}

// ErrRollback is returned by Run when the transaction rolled back as the
// workload intends (a TPC-C New-Order on an unused item, say). It counts as
// a completed transaction, not an error.
var ErrRollback = errors.New("user rollback")
