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
	// an expected, intended rollback, ErrInDoubt (WrapInDoubt) a commit
	// whose answer the lost connection took, and ErrAbort a result that
	// makes the whole run worthless.
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

// Flusher is a VU (or a Session) whose work reaches the database's own counters late.
// Flush publishes it, so that the counters read next hold all the VU has
// done. The driver calls it as the VU opens, and at each edge of the
// measured window, between two transactions, while every VU waits for
// the edge to be read: so the database counts on each side of an edge
// exactly the transactions the client does.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Pooled is a Workload whose virtual users can be terminals that share
// sessions (Config.Connections): a terminal picks and paces its
// transactions, and holds a session only while one runs, as a
// transaction monitor lends its connections.
type Pooled interface {
	// NewTerminal makes terminal id (0-based). It does no I/O and should
	// be small: a run may hold tens of thousands.
	NewTerminal(id int) Terminal
	// NewSession opens session id (0-based) with its own connection,
	// before the clock starts, as NewVU does.
	NewSession(ctx context.Context, id int) (Session, error)
}

// Terminal is one virtual user of a pooled run, without a connection:
// Next picks its next transaction type, Pacing its waits around it.
type Terminal interface {
	Next() int
	Pacer
}

// Session is one connection of a pooled run, lent to a terminal for one
// transaction at a time. It is a Flusher where its target is one.
type Session interface {
	// Run runs term's transaction tx, chosen by term's Next, with the
	// contract of VU.Run: after a retryable error the driver calls it
	// again, on the same session, and it repeats the same inputs.
	Run(ctx context.Context, term Terminal, tx int, t Tally) error
	// Reconnect replaces a lost connection.
	Reconnect(ctx context.Context) error
	Close() error
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

// ErrInDoubt, wrapped in the error Run returns (WrapInDoubt), says that
// the transaction's commit, or the one call that commits it, was sent and
// the connection died before its answer came: it may or may not have
// committed, Jepsen's "indeterminate". The driver counts it apart from the
// completions and the errors, never in a rate, never retries it, and
// reconnects.
var ErrInDoubt = errors.New("in doubt")

// WrapInDoubt marks err, the error of a transaction whose commit was in
// flight as its connection was lost, as in doubt: errors.Is(err,
// ErrInDoubt) holds, and so does everything err itself matched, so that a
// target classifies it as before. A nil err stays nil.
func WrapInDoubt(err error) error {
	if err == nil {
		return nil
	}
	return &inDoubt{err}
}

type inDoubt struct{ err error }

func (e *inDoubt) Error() string {
	return "in doubt (the commit was sent, its answer never came): " + e.err.Error()
}
func (e *inDoubt) Unwrap() []error { return []error{ErrInDoubt, e.err} }
