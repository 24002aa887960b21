package driver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/target"
)

var (
	errBusy = errors.New("busy")
	errGone = errors.New("gone")
	errBad  = errors.New("bad\nsecond line")
)

// scripted is a workload whose VUs cycle through outcomes, so the test
// knows what the driver should have counted.
type scripted struct {
	reconnects atomic.Int64
}

func (s *scripted) TxNames() []string    { return []string{"a", "b"} }
func (s *scripted) TallyNames() []string { return []string{"runs"} }
func (s *scripted) NewVU(context.Context, int) (VU, error) {
	return &scriptedVU{w: s}, nil
}

type scriptedVU struct {
	w     *scripted
	n     int
	tries int
}

func (v *scriptedVU) Next() int { v.n++; v.tries = 0; return v.n % 2 }

// Run: type a always succeeds after one busy retry; type b cycles through
// ok, rollback, error, lost connection.
func (v *scriptedVU) Run(_ context.Context, tx int, t *Tally) error {
	time.Sleep(time.Millisecond)
	v.tries++
	t[0]++
	if tx == 0 {
		if v.tries == 1 {
			return errBusy
		}
		return nil
	}
	switch (v.n / 2) % 4 {
	case 1:
		return ErrRollback
	case 2:
		return errBad
	case 3:
		return errGone
	}
	return nil
}
func (v *scriptedVU) Pacing(int) (time.Duration, time.Duration) { return 0, 0 }
func (v *scriptedVU) Reconnect(context.Context) error           { v.w.reconnects.Add(1); return nil }
func (v *scriptedVU) Close() error                              { return nil }

func classify(err error) target.ErrClass {
	switch err {
	case errBusy:
		return target.ErrRetry
	case errGone:
		return target.ErrConnLost
	}
	return target.ErrOther
}

func TestRunCountsOnlyTheWindow(t *testing.T) {
	w := &scripted{}
	var edges []bool
	var ticks int
	res, err := Run(context.Background(), w, Config{
		VUs: 3, Rampup: 300 * time.Millisecond, Duration: 1500 * time.Millisecond, Classify: classify,
		WindowEdge: func(start bool) { edges = append(edges, start) },
		Progress:   func(Tick) { ticks++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted {
		t.Error("run marked interrupted")
	}
	if len(edges) != 2 || !edges[0] || edges[1] {
		t.Errorf("window edges = %v, want [true false]", edges)
	}
	if s := res.WindowSeconds(); s < 1.4 || s > 1.7 {
		t.Errorf("window = %.2fs, want about 1.5", s)
	}
	a, b := res.Tx[0], res.Tx[1]
	if a.Count == 0 || a.Errors != 0 || a.Retries < a.Count-3 || a.Retries > a.Count+3 {
		t.Errorf("type a: count %d errors %d retries %d; want one retry per transaction", a.Count, a.Errors, a.Retries)
	}
	if a.Hist.TotalCount() != a.Count || b.Hist.TotalCount() != b.Count {
		t.Error("histogram counts differ from completion counts")
	}
	// b: ok and rollback complete; error and lost connection do not.
	if b.Count == 0 || b.Errors == 0 || b.Count < b.Errors-6 || b.Count > b.Errors+6 {
		t.Errorf("type b: count %d errors %d; want as many completions as errors", b.Count, b.Errors)
	}
	if b.ErrorSample != "bad" && b.ErrorSample != "gone" {
		t.Errorf("error sample = %q, want the first line of an error", b.ErrorSample)
	}
	if w.reconnects.Load() == 0 {
		t.Error("a lost connection was not reopened")
	}
	if res.Tally[0] < a.Count+b.Count {
		t.Errorf("tally %d < completions %d", res.Tally[0], a.Count+b.Count)
	}
	if ticks == 0 || len(res.Series) == 0 {
		t.Error("no progress ticks or series")
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	res, err := Run(ctx, &scripted{}, Config{VUs: 2, Rampup: 200 * time.Millisecond, Duration: time.Minute, Classify: classify})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Error("not marked interrupted")
	}
	if s := res.WindowSeconds(); s < 0.3 || s > 1 {
		t.Errorf("window = %.2fs, want it cut at the interrupt (about 0.5)", s)
	}
	if res.Tx[0].Count == 0 {
		t.Error("nothing counted before the interrupt")
	}
}

func TestRunInterruptedInRampup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := Run(ctx, &scripted{}, Config{VUs: 2, Rampup: time.Minute, Duration: time.Minute, Classify: classify})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.WindowSeconds() != 0 || res.Tx[0].Count != 0 {
		t.Errorf("interrupted=%v window=%v count=%d; want an interrupted run with no window", res.Interrupted, res.WindowSeconds(), res.Tx[0].Count)
	}
}
