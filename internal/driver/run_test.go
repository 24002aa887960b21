package driver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
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
func (v *scriptedVU) Run(_ context.Context, tx int, t Tally) error {
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
func (v *scriptedVU) Reconnect(context.Context) error { v.w.reconnects.Add(1); return nil }
func (v *scriptedVU) Close() error                    { return nil }

func classify(err error) dbtarget.ErrClass {
	switch err {
	case errBusy:
		return dbtarget.ErrRetry
	case errGone:
		return dbtarget.ErrConnLost
	}
	return dbtarget.ErrOther
}

func TestRunCountsOnlyTheWindow(t *testing.T) {
	w := &scripted{}
	var edges []bool
	var ticks int
	res, err := Run(context.Background(), w, Config{
		VUs: 3, Rampup: 300 * time.Millisecond, Duration: 1500 * time.Millisecond, Classify: classify,
		WindowEdge: func(_ context.Context, start bool) error { edges = append(edges, start); return nil },
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
	other, lost := res.ErrorClasses["other"], res.ErrorClasses["connection_lost"]
	if other == 0 || lost == 0 || other+lost != b.Errors || len(res.ErrorClasses) != 2 {
		t.Errorf("errors by class %v, want other and connection_lost adding up to %d", res.ErrorClasses, b.Errors)
	}
	var perSecond int64
	for _, p := range res.Series {
		perSecond += p.Errors
	}
	// The series ends with its last whole second, inside the window.
	if perSecond == 0 || perSecond > b.Errors {
		t.Errorf("the series counts %d errors, want some, and no more than the window's %d", perSecond, b.Errors)
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

// counting is a workload of one transaction type with many counters: each
// transaction adds its VU's id+1 to counter id and 1 to the last one.
// abortAt > 0 makes that transaction of VU 0 abort the run.
type counting struct {
	counters, abortAt int
	// wait is a paced VU's think before each transaction, busy how long
	// a transaction takes (2 ms when 0).
	wait, busy time.Duration
}

func (c *counting) TxNames() []string { return []string{"only"} }
func (c *counting) TallyNames() []string {
	names := make([]string, c.counters)
	for i := range names {
		names[i] = string(rune('a' + i))
	}
	return names
}
func (c *counting) NewVU(_ context.Context, id int) (VU, error) {
	if c.wait > 0 {
		return &pacedVU{countingVU{c: c, id: id}}, nil
	}
	return &countingVU{c: c, id: id}, nil
}

type countingVU struct {
	c     *counting
	id, n int
}

var errWrong = fmt.Errorf("the loop returned 1, not 2: %w", ErrAbort)

func (v *countingVU) Next() int                                   { return 0 }
func (v *countingVU) Run(_ context.Context, _ int, t Tally) error { return v.run(t) }
func (v *countingVU) Reconnect(context.Context) error             { return nil }
func (v *countingVU) Close() error                                { return nil }

type pacedVU struct{ countingVU }

func (v *pacedVU) Pacing(int) (time.Duration, time.Duration) { return v.c.wait, 0 }

// run is countingVU's Run, shared by the paced one.
func (v *countingVU) run(t Tally) error {
	time.Sleep(cmp.Or(v.c.busy, 2*time.Millisecond))
	v.n++
	if v.c.abortAt > 0 && v.id == 0 && v.n == v.c.abortAt {
		return errWrong
	}
	t[v.id] += int64(v.id + 1)
	t[len(t)-1]++
	return nil
}

// TestRunFixedWork: with Each, every VU runs exactly that many
// transactions, all inside the window, and more counters than the old
// fixed limit of eight are kept.
func TestRunFixedWork(t *testing.T) {
	var edges []bool
	w := &counting{counters: 10}
	res, err := Run(context.Background(), w, Config{VUs: 3, Each: 7, Rampup: time.Hour, Classify: classify,
		WindowEdge: func(_ context.Context, start bool) error { edges = append(edges, start); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(edges) != 2 || res.Interrupted {
		t.Errorf("edges %v, interrupted %v; want one window, not interrupted", edges, res.Interrupted)
	}
	if res.Tx[0].Count != 21 || len(res.Tally) != 10 {
		t.Fatalf("count %d, %d counters; want 21 and 10", res.Tx[0].Count, len(res.Tally))
	}
	for id := range 3 {
		if res.Tally[id] != int64(7*(id+1)) {
			t.Errorf("counter %d = %d, want %d", id, res.Tally[id], 7*(id+1))
		}
	}
	if res.Tally[9] != 21 {
		t.Errorf("last counter %d, want 21", res.Tally[9])
	}
	if s := res.WindowSeconds(); s <= 0 || s > 5 {
		t.Errorf("window %.2fs: the ramp-up must not apply to a fixed amount of work", s)
	}
}

// TestRunAbort: a transaction that aborts ends the run with its error.
func TestRunAbort(t *testing.T) {
	res, err := Run(context.Background(), &counting{counters: 2, abortAt: 3}, Config{VUs: 2, Each: 1000, Classify: classify})
	if !errors.Is(err, ErrAbort) || err != errWrong || res != nil {
		t.Fatalf("res %v, err %v; want no result and the abort's error", res, err)
	}
	res, err = Run(context.Background(), &counting{counters: 2, abortAt: 3}, Config{VUs: 1, Duration: time.Minute, Classify: classify})
	if err != errWrong || res != nil {
		t.Fatalf("timed: res %v, err %v; want the abort to end a timed window too", res, err)
	}
}

// TestRunPacing: a VU that paces waits before each transaction.
func TestRunPacing(t *testing.T) {
	res, err := Run(context.Background(), &counting{counters: 2, wait: 100 * time.Millisecond},
		Config{VUs: 1, Duration: 600 * time.Millisecond, Classify: classify})
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Tx[0].Count; n < 3 || n > 7 {
		t.Errorf("%d transactions in 0.6 s with 100 ms waits, want about 6", n)
	}
}

// watcher records what an Observer is told.
type watcher struct {
	mu       sync.Mutex
	phases   []Phase
	outcomes [2][4]int64 // per type, per Outcome
	retries  [2]int64
	measured [2]int64 // completions while the phase was measure
	last     Phase
}

func (w *watcher) Phase(p Phase) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.phases = append(w.phases, p)
	w.last = p
}

func (w *watcher) Transaction(tx int, took time.Duration, retries int, o Outcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outcomes[tx][o]++
	w.retries[tx] += int64(retries)
	if o != Failed && w.last == PhaseMeasure {
		w.measured[tx]++
	}
}

// TestObserverSeesEveryTransaction: the observer is told every phase in
// order and every transaction, in all phases, with its outcome.
func TestObserverSeesEveryTransaction(t *testing.T) {
	w := &watcher{}
	res, err := Run(context.Background(), &scripted{}, Config{
		VUs: 3, Rampup: 300 * time.Millisecond, Duration: 700 * time.Millisecond, Classify: classify, Observer: w,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Phase{PhaseRampup, PhaseMeasure, PhaseDone}; !slices.Equal(w.phases, want) {
		t.Errorf("phases %v, want %v", w.phases, want)
	}
	a, b := w.outcomes[0], w.outcomes[1]
	// Type a fails once with a retryable error, then commits.
	if a[Committed] == 0 || a[RolledBack] != 0 || a[Failed] != 0 || w.retries[0] != a[Committed] {
		t.Errorf("type a: outcomes %v, retries %d; want only commits, one retry each", a, w.retries[0])
	}
	// Each VU's type b cycles ok, rollback, error, lost connection.
	if b[Committed] == 0 || b[RolledBack] == 0 || b[Failed] < b[Committed]+b[RolledBack]-6 || b[Failed] > b[Committed]+b[RolledBack]+6 {
		t.Errorf("type b: outcomes %v; want commits, rollbacks and as many failures as both", b)
	}
	for tx := range 2 {
		// The window's edges and the observer's phase differ by the
		// transactions in flight as the phase changes, one per VU at most.
		if got, want := w.measured[tx], res.Tx[tx].Count; got < want-3 || got > want+3 {
			t.Errorf("type %d: %d completions seen in the measure phase, the window counted %d", tx, got, want)
		}
		if seen := w.outcomes[tx][Committed] + w.outcomes[tx][RolledBack]; seen <= res.Tx[tx].Count {
			t.Errorf("type %d: observer saw %d completions, the window alone counted %d; want the ramp-up's too", tx, seen, res.Tx[tx].Count)
		}
	}
}

// TestActions: an action runs at its moment on the series' clock and its
// notes become events; one due after the run is never done; one that
// fails ends the run with its error.
func TestActions(t *testing.T) {
	var late atomic.Bool
	res, err := Run(context.Background(), &scripted{}, Config{
		VUs: 2, Rampup: 100 * time.Millisecond, Duration: 600 * time.Millisecond, Classify: classify,
		Actions: []Action{
			{At: 300 * time.Millisecond, Do: func(_ context.Context, note func(string)) error {
				note("killed")
				time.Sleep(100 * time.Millisecond)
				note("up again")
				return nil
			}},
			{At: time.Hour, Do: func(context.Context, func(string)) error { late.Store(true); return nil }},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if late.Load() {
		t.Error("an action due after the run was done")
	}
	if len(res.Events) != 2 || res.Events[0].What != "killed" || res.Events[1].What != "up again" {
		t.Fatalf("events %+v, want killed and up again", res.Events)
	}
	// Events are stamped to the millisecond: 0.308 and 0.408 s are 0.1 s
	// apart, though their difference in floating point is just under.
	if e := res.Events; e[0].T < 0.3 || e[0].T > 0.45 || e[1].T-e[0].T < 0.1-0.0005 {
		t.Errorf("events at %.3f and %.3f s, want 0.3 and 0.1 s later", e[0].T, e[1].T)
	}

	failed := errors.New("restart failed")
	_, err = Run(context.Background(), &scripted{}, Config{
		VUs: 1, Duration: 10 * time.Second, Classify: classify,
		Actions: []Action{{At: 100 * time.Millisecond, Do: func(context.Context, func(string)) error { return failed }}},
	})
	if !errors.Is(err, failed) {
		t.Errorf("run with a failed action: %v, want %v", err, failed)
	}
}

// lagging is a workload whose VUs' transactions reach its "database"
// counter late, as PostgreSQL's statistics do: only every seventh
// transaction publishes what came before it, unless the VU is flushed.
type lagging struct {
	published atomic.Int64
	pace      time.Duration
}

func (l *lagging) TxNames() []string    { return []string{"a"} }
func (l *lagging) TallyNames() []string { return nil }
func (l *lagging) NewVU(context.Context, int) (VU, error) {
	return &laggingVU{w: l, pending: 1}, nil // its start-up counts too
}

type laggingVU struct {
	w       *lagging
	pending int64
}

func (v *laggingVU) Next() int { return 0 }
func (v *laggingVU) Run(context.Context, int, Tally) error {
	time.Sleep(time.Millisecond)
	if v.pending++; v.pending%7 == 0 {
		v.Flush(context.Background())
	}
	return nil
}
func (v *laggingVU) Flush(context.Context) error {
	v.w.published.Add(v.pending)
	v.pending = 0
	return nil
}
func (v *laggingVU) Pacing(int) (time.Duration, time.Duration) { return 0, v.w.pace }
func (v *laggingVU) Reconnect(context.Context) error           { return nil }
func (v *laggingVU) Close() error                              { return nil }

// TestEdgesFlush: the counter read at each edge of the window holds
// exactly the transactions the client counts on the same side of it,
// whether the VUs are busy or waiting out their pacing at the edge.
func TestEdgesFlush(t *testing.T) {
	for _, pace := range []time.Duration{0, 30 * time.Millisecond} {
		w := &lagging{pace: pace}
		var marks []int64
		res, err := Run(context.Background(), w, Config{
			VUs: 6, Rampup: 100 * time.Millisecond, Duration: 500 * time.Millisecond, Classify: classify,
			WindowEdge: func(context.Context, bool) error { marks = append(marks, w.published.Load()); return nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(marks) != 2 || res.Tx[0].Count == 0 {
			t.Fatalf("pace %v: marks %v, %d transactions", pace, marks, res.Tx[0].Count)
		}
		if db := marks[1] - marks[0]; db != res.Tx[0].Count {
			t.Errorf("pace %v: %d transactions published over the window, %d counted by the client", pace, db, res.Tx[0].Count)
		}
	}
}
