package driver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// classifyIs classifies as classify does, through wrapping.
func classifyIs(err error) dbtarget.ErrClass {
	switch {
	case errors.Is(err, errBusy):
		return dbtarget.ErrRetry
	case errors.Is(err, errGone):
		return dbtarget.ErrConnLost
	}
	return dbtarget.ErrOther
}

// TestInDoubt: a commit in doubt may have happened, so it is never run
// again, whatever its error would otherwise say; it counts apart from the
// completions and the errors, in the window, the series and the
// observer's outcomes; and the connection it was lost with is reopened.
func TestInDoubt(t *testing.T) {
	w := &alwaysInDoubt{}
	watched := &watcher{}
	res, err := Run(context.Background(), w, Config{VUs: 1, Duration: 1100 * time.Millisecond, Classify: classifyIs, Observer: watched})
	if err != nil {
		t.Fatal(err)
	}
	tx := res.Tx[0]
	if tx.InDoubt == 0 || tx.Retries != 0 || tx.Errors != 0 || tx.Count != 0 || w.runs.Load() != w.reconnects.Load() {
		t.Errorf("in doubt %d, retries %d, errors %d, completed %d; %d runs and %d reconnects: want each in doubt, never retried, each followed by a reconnect",
			tx.InDoubt, tx.Retries, tx.Errors, tx.Count, w.runs.Load(), w.reconnects.Load())
	}
	if res.ErrorClasses != nil || tx.ErrorSample != "" || tx.Hist.TotalCount() != 0 {
		t.Errorf("errors by class %v, sample %q, %d latencies: want in doubt in none", res.ErrorClasses, tx.ErrorSample, tx.Hist.TotalCount())
	}
	var perSecond, failed int64
	for _, p := range res.Series {
		perSecond += p.InDoubt
		failed += p.Errors
	}
	// The series has the first second, not the part-second after it.
	if perSecond < tx.InDoubt/2 || perSecond > tx.InDoubt+1 || failed != 0 || watched.outcomes[0][InDoubt] != w.runs.Load() {
		t.Errorf("in doubt: %d in the series (%d failed), %d seen by the observer of %d runs, %d in the window",
			perSecond, failed, watched.outcomes[0][InDoubt], w.runs.Load(), tx.InDoubt)
	}
}

// alwaysInDoubt's every commit is in doubt, after a retryable error.
type alwaysInDoubt struct{ runs, reconnects atomic.Int64 }

func (w *alwaysInDoubt) TxNames() []string                      { return []string{"a"} }
func (w *alwaysInDoubt) TallyNames() []string                   { return nil }
func (w *alwaysInDoubt) NewVU(context.Context, int) (VU, error) { return alwaysInDoubtVU{w}, nil }

type alwaysInDoubtVU struct{ w *alwaysInDoubt }

func (v alwaysInDoubtVU) Next() int { return 0 }
func (v alwaysInDoubtVU) Run(context.Context, int, Tally) error {
	v.w.runs.Add(1)
	time.Sleep(5 * time.Millisecond)
	return WrapInDoubt(errBusy)
}
func (v alwaysInDoubtVU) Reconnect(context.Context) error { v.w.reconnects.Add(1); return nil }
func (v alwaysInDoubtVU) Close() error                    { return nil }
