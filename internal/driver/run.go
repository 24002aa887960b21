package driver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/latency"
)

// Config is how to drive a workload.
type Config struct {
	VUs      int
	Rampup   time.Duration
	Duration time.Duration
	// Each, when positive, makes the run a fixed amount of work instead of
	// a timed window: every VU starts at once (no ramp-up) and runs exactly
	// Each transactions, and the window closes when the last one finishes.
	Each int
	// Classify says what an error from Run means.
	Classify func(error) dbtarget.ErrClass
	// MaxRetries bounds the retries of one transaction (default 10).
	MaxRetries int
	// WindowEdge is called as the measured window starts (start true) and
	// ends, so that database-side counters are read at the same edges.
	WindowEdge func(start bool)
	// Progress is called about once a second.
	Progress func(Tick)
	// Grace is how long VUs may take to finish their current transaction
	// once the run ends, before it is cancelled (default 30s).
	Grace time.Duration
	// Observer, when set, follows the run as it happens.
	Observer Observer
	// Actions are done to the system under test at set moments of the run.
	Actions []Action
	// LostAfter is how long the server may stay out of reach, virtual
	// users failing to reconnect, before the run gives it up and ends
	// (default dbtarget.ReconnectLimit).
	LostAfter time.Duration
	// StallAfter is how long no transaction may end while virtual users
	// wait in one before the stretch counts as a stall (default 3 s; runs
	// of a fixed amount of work, whose transactions may be long, have none).
	StallAfter time.Duration
}

// Action is something done to the system under test at a set moment of a
// run, such as killing its server; what it does is the caller's, when is
// the driver's, on the clock of the series.
type Action struct {
	At time.Duration // since the run started
	// Do does it; note records, as an event of the run, what is happening
	// as it is called. An error ends the run with that error: the system
	// under test is no longer what the run measures.
	Do func(ctx context.Context, note func(what string)) error
}

// Event is something that happened to the system under test during a run.
type Event struct {
	T    float64 // seconds since the run started
	What string
}

// Observer follows a run as it happens, for a live view of it. Phase is
// called as the run enters each phase. Transaction is called from the VUs'
// goroutines as each transaction ends, in every phase, so it must be safe
// for concurrent use and cost no more than a few atomic adds: it is on the
// path the run measures.
type Observer interface {
	Phase(Phase)
	Transaction(tx int, took time.Duration, retries int, o Outcome)
}

// Outcome is how a transaction ended.
type Outcome uint8

const (
	Committed Outcome = iota
	// RolledBack is an intended rollback (ErrRollback): a completed transaction.
	RolledBack
	// Failed is an error, after any retries.
	Failed
)

// Phase is where a run is.
type Phase int32

const (
	PhaseRampup Phase = iota
	PhaseMeasure
	PhaseDone
)

func (p Phase) String() string {
	return [...]string{"ramp-up", "measure", "done"}[p]
}

// Tick is a progress report.
type Tick struct {
	Phase   Phase
	Elapsed time.Duration // since the run started
	// Left is the time left in the current phase (timed runs).
	Left time.Duration
	// Done and Total count the transactions finished and planned (runs of
	// a fixed amount of work).
	Done, Total int64
	// Counts are transactions completed per type in the last second.
	Counts []int64
	// Errors so far, all phases.
	Errors int64
	// VUs running.
	VUs int
}

// TxResult is the measured window's figures for one transaction type.
type TxResult struct {
	Name        string
	Count       int64 // completed: committed or intentionally rolled back
	Errors      int64
	Retries     int64
	ErrorSample string
	Hist        *hdrhistogram.Histogram
}

// Point is one second of the series: completions per type, all phases.
type Point struct {
	T      float64 // seconds since the run started
	Phase  string
	Counts []int64
	// Errors is the transactions that failed in the second, of all types.
	Errors int64
	// Latency is the second's completed transactions' percentiles, all
	// types; nil when none completed.
	Latency *latency.Percentiles
}

// Result is what a run measured.
type Result struct {
	Started     time.Time
	WindowStart time.Time // zero if the run stopped during ramp-up
	WindowEnd   time.Time
	Interrupted bool
	Tx          []TxResult
	Tally       Tally
	Series      []Point
	// ErrorClasses counts the measured window's errors by what the
	// target said they were (dbtarget.ErrClass's names); nil without errors.
	ErrorClasses map[string]int64
	// Events are what the Actions did, in order.
	Events []Event
	// Outages are the stretches without a server: from a lost connection
	// that would not reopen to the first that did. With ServerLost, the
	// last one lasted LostAfter, or to the window's end, and ended the run.
	Outages []Span
	// ServerLost says the run ended without a server.
	ServerLost bool
	// Stalls are the stretches of StallAfter or more in which no
	// transaction ended while virtual users waited in one.
	Stalls []Span
}

// WindowSeconds is the measured window's length, which rates divide by.
// A run whose server was lost counts it only up to the loss: after it,
// the run was waiting for a server that never came back.
func (r *Result) WindowSeconds() float64 {
	if r.WindowStart.IsZero() {
		return 0
	}
	end := r.WindowEnd
	if at, ok := r.LostAt(); ok && at.Before(end) {
		end = at
	}
	return max(end.Sub(r.WindowStart).Seconds(), 0)
}

// LostAt is when the server was lost, in a run that ended without one.
func (r *Result) LostAt() (time.Time, bool) {
	if !r.ServerLost || len(r.Outages) == 0 {
		return time.Time{}, false
	}
	at := r.Outages[len(r.Outages)-1].At
	return r.Started.Add(time.Duration(at * float64(time.Second))), true
}

// vuState is one VU's figures. The VU goroutine alone writes the
// histograms and the tally; the atomic counters are read by the ticker.
type vuState struct {
	done    []atomic.Int64 // completions per type, all phases, for progress
	count   []int64        // completions per type in the window
	errs    []int64
	retries []int64
	sample  []string
	byClass [dbtarget.ErrUserRollback + 1]int64 // the window's errors by class
	hist    []*hdrhistogram.Histogram
	tally   Tally
	scratch Tally // one transaction's counters, reused
	errAll  atomic.Int64
	// began and ended are when the VU's last transaction began and ended
	// (UnixNano), for the stall check; ended starts as the VU starts.
	began, ended atomic.Int64
	// second is the latencies of the second secondAt, until it is over.
	second   *hdrhistogram.Histogram
	secondAt int
}

func newVUState(types, tallies int) *vuState {
	s := &vuState{
		done: make([]atomic.Int64, types), count: make([]int64, types), errs: make([]int64, types),
		retries: make([]int64, types), sample: make([]string, types), hist: make([]*hdrhistogram.Histogram, types),
		tally: make(Tally, tallies), scratch: make(Tally, tallies), second: latency.NewSecondHistogram(),
	}
	for i := range s.hist {
		s.hist[i] = latency.NewHistogram()
	}
	return s
}

// Run drives w until the window ends or ctx is cancelled (Ctrl-C), which
// ends the window early and marks the result interrupted. VUs finish the
// transaction in hand before they stop. A transaction that fails with
// ErrAbort ends the run at once, and Run returns its error.
func Run(ctx context.Context, w Workload, cfg Config) (*Result, error) {
	if cfg.VUs < 1 {
		return nil, fmt.Errorf("need at least one virtual user, got %d", cfg.VUs)
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 10
	}
	if cfg.Grace == 0 {
		cfg.Grace = 30 * time.Second
	}
	if cfg.LostAfter == 0 {
		cfg.LostAfter = dbtarget.ReconnectLimit
	}
	if cfg.StallAfter == 0 {
		cfg.StallAfter = 3 * time.Second
	}
	batch := cfg.Each > 0
	if batch {
		cfg.Rampup, cfg.StallAfter = 0, -1
	}
	names := w.TxNames()
	tallies := len(w.TallyNames())
	// Connections open before the clock starts, so a target that refuses
	// them fails the run at once instead of part-way through ramp-up.
	vus := make([]VU, cfg.VUs)
	for i := range vus {
		v, err := w.NewVU(ctx, i)
		if err == nil {
			// Its start-up, published before anything is read.
			if err = flush(ctx, v); err != nil {
				v.Close()
			}
		}
		if err != nil {
			for _, o := range vus[:i] {
				o.Close()
			}
			return nil, err
		}
		vus[i] = v
	}

	// runCtx ends the window: Ctrl-C, or an aborting transaction.
	runCtx, endRun := context.WithCancel(ctx)
	defer endRun()
	var abortOnce sync.Once
	var abortErr error
	abort := func(err error) {
		abortOnce.Do(func() { abortErr = err; endRun() })
	}

	var phase atomic.Int32
	setPhase := func(p Phase) {
		phase.Store(int32(p))
		if cfg.Observer != nil {
			cfg.Observer.Phase(p)
		}
	}
	setPhase(PhaseRampup)
	stop := make(chan struct{})
	// work outlives stop by the grace period so in-flight transactions
	// can finish instead of being cut off mid-statement.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()

	res := &Result{Started: time.Now()}
	sh := &shared{cfg: &cfg, phase: &phase, stop: stop, hurry: make(chan struct{}), abort: abort, started: res.Started,
		health: newHealth(res.Started, cfg.LostAfter, cfg.StallAfter)}
	// The VUs stop at each edge of the window while it is read (see
	// Flusher). A fixed amount of work has no start edge to stop at: its
	// VUs were flushed as they opened, and start once the window is open.
	edges := []*edge{newEdge(len(vus)), newEdge(len(vus))}
	first := 0
	if batch {
		first = 1
	}
	openWindow := func() {
		if !batch {
			edges[0].hold(cfg.Grace, sh.health.gone)
		}
		if cfg.WindowEdge != nil {
			cfg.WindowEdge(true)
		}
		res.WindowStart = time.Now()
		setPhase(PhaseMeasure)
		close(edges[0].read)
	}
	closeWindow := func() {
		// Virtual users reconnecting are hurried, and stop at the edge
		// once they are back (a reconnect does not stop there).
		close(sh.hurry)
		edges[1].hold(cfg.Grace, sh.health.gone)
		setPhase(PhaseDone)
		res.WindowEnd = time.Now()
		// A window that closes without a server waits for it, up to
		// LostAfter since it went; without it the run ends as lost, and
		// its edge has nothing to read.
		if sh.health.await() && cfg.WindowEdge != nil {
			cfg.WindowEdge(false)
		}
		close(edges[1].read)
	}
	if batch {
		// Every transaction of a fixed amount of work counts, so the
		// window is open before the first one starts.
		openWindow()
	}
	states := make([]*vuState, cfg.VUs)
	var running atomic.Int32
	var wg sync.WaitGroup
	for i, v := range vus {
		states[i] = newVUState(len(names), tallies)
		delay := time.Duration(0)
		if cfg.VUs > 1 {
			delay = cfg.Rampup * time.Duration(i) / time.Duration(cfg.VUs)
		}
		ve := &vuEdges{all: edges, next: first, v: v}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer v.Close()
			defer ve.leave(work)
			if !ve.sleep(work, delay, stop) {
				return
			}
			running.Add(1)
			defer running.Add(-1)
			runVU(work, v, ve, states[i], sh)
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	acted := act(work, res, cfg.Actions, stop, abort)

	ticks := make(chan struct{})
	go func() {
		defer close(ticks)
		tickLoop(res, states, sh, &running, endRun)
	}()

	switch {
	case batch:
		select {
		case <-finished:
		case <-runCtx.Done():
			res.Interrupted = ctx.Err() != nil
		}
		closeWindow()
	case wait(runCtx, time.Until(res.Started.Add(cfg.Rampup))):
		openWindow()
		if !wait(runCtx, cfg.Duration) {
			res.Interrupted = ctx.Err() != nil
		}
		closeWindow()
	default:
		// Ctrl-C, or a server lost, during ramp-up.
		res.Interrupted = ctx.Err() != nil
		setPhase(PhaseDone)
		sh.health.giveUp(time.Now())
	}
	close(stop)
	select {
	case <-finished:
	case <-time.After(cfg.Grace):
		cancelWork()
		<-finished
	}
	<-ticks
	acted.Wait()
	if abortErr != nil {
		return nil, abortErr
	}
	h := sh.health
	h.finish(time.Now())
	res.Outages, res.ServerLost, res.Stalls = h.outages, h.lost, h.stalls
	for _, s := range states {
		sh.seconds.add(s.secondAt, s.second)
	}
	sh.seconds.attach(res.Series)

	res.Tx = make([]TxResult, len(names))
	for i, n := range names {
		tr := TxResult{Name: n, Hist: latency.NewHistogram()}
		for _, s := range states {
			tr.Count += s.count[i]
			tr.Errors += s.errs[i]
			tr.Retries += s.retries[i]
			if tr.ErrorSample == "" {
				tr.ErrorSample = s.sample[i]
			}
			tr.Hist.Merge(s.hist[i])
		}
		res.Tx[i] = tr
	}
	res.Tally = make(Tally, tallies)
	for _, s := range states {
		res.Tally.Add(s.tally)
		for c, n := range s.byClass {
			if n > 0 {
				if res.ErrorClasses == nil {
					res.ErrorClasses = map[string]int64{}
				}
				res.ErrorClasses[dbtarget.ErrClass(c).String()] += n
			}
		}
	}
	return res, nil
}

// act does each action at its moment, unless the run stops first, and
// records what they note in res.Events. The returned group ends when every
// action started has finished: one under way when the window closes runs
// to its end, so that the run never leaves the system half done.
func act(ctx context.Context, res *Result, actions []Action, stop <-chan struct{}, abort func(error)) *sync.WaitGroup {
	var wg sync.WaitGroup
	var mu sync.Mutex
	note := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		t := time.Since(res.Started).Round(time.Millisecond).Seconds()
		res.Events = append(res.Events, Event{T: t, What: what})
	}
	for _, a := range actions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !sleep(time.Until(res.Started.Add(a.At)), stop) {
				return
			}
			if err := a.Do(ctx, note); err != nil {
				abort(err)
			}
		}()
	}
	return &wg
}

// shared is what a run's virtual users and its ticker have in common.
type shared struct {
	cfg   *Config
	phase *atomic.Int32
	stop  <-chan struct{}
	// hurry closes as the window does: virtual users reconnecting then
	// try every 100 ms, so that a server back shows at once.
	hurry   chan struct{}
	abort   func(error)
	started time.Time
	health  *health
	seconds seconds
}

// runVU is one VU's loop: pick, wait, run with retries, record, wait.
func runVU(ctx context.Context, v VU, ve *vuEdges, s *vuState, sh *shared) {
	cfg, phase, stop := sh.cfg, sh.phase, sh.stop
	s.ended.Store(time.Now().UnixNano())
	pacer, _ := v.(Pacer)
	for n := 0; cfg.Each == 0 || n < cfg.Each; n++ {
		if !ve.sleep(ctx, 0, stop) {
			return
		}
		tx := v.Next()
		var after time.Duration
		if pacer != nil {
			var before time.Duration
			before, after = pacer.Pacing(tx)
			if !ve.sleep(ctx, before, stop) {
				return
			}
		}
		t := s.scratch
		clear(t)
		retries := int64(0)
		began := time.Now()
		s.began.Store(began.UnixNano())
		err := v.Run(ctx, tx, t)
		for err != nil && !errors.Is(err, ErrRollback) && cfg.Classify(err) == dbtarget.ErrRetry && retries < int64(cfg.MaxRetries) {
			retries++
			clear(t)
			err = v.Run(ctx, tx, t)
		}
		ended := time.Now()
		s.ended.Store(ended.UnixNano())
		sh.health.ended(ended.UnixNano())
		if errors.Is(err, ErrAbort) {
			sh.abort(err)
			return
		}
		rolledBack := errors.Is(err, ErrRollback)
		ok := err == nil || rolledBack
		if cfg.Observer != nil {
			cfg.Observer.Transaction(tx, ended.Sub(began), int(retries), outcome(ok, rolledBack))
		}
		measured := Phase(phase.Load()) == PhaseMeasure
		class := dbtarget.ErrOther
		if !ok {
			class = cfg.Classify(err)
		}
		if ok {
			s.done[tx].Add(1)
			recordSecond(s, sh, ended, ended.Sub(began))
		} else {
			s.errAll.Add(1)
			if s.sample[tx] == "" {
				s.sample[tx] = human.OneLine(err)
			}
		}
		if measured {
			s.retries[tx] += retries
			if ok {
				s.count[tx]++
				latency.Record(s.hist[tx], ended.Sub(began))
				s.tally.Add(t)
			} else {
				s.errs[tx]++
				s.byClass[class]++
			}
		}
		if !ok && class == dbtarget.ErrConnLost {
			// A VU back after the window closed has nothing more to do:
			// its transactions would count on the database's side alone.
			if !reconnect(ctx, v, sh, ended) || Phase(phase.Load()) == PhaseDone {
				return
			}
		}
		if !ve.sleep(ctx, after, stop) {
			return
		}
	}
}

func outcome(ok, rolledBack bool) Outcome {
	switch {
	case rolledBack:
		return RolledBack
	case ok:
		return Committed
	}
	return Failed
}

// recordSecond adds a completed transaction's latency to the VU's
// histogram of the second it ended in, handing the previous second's over
// first.
func recordSecond(s *vuState, sh *shared, ended time.Time, took time.Duration) {
	if i := int(ended.Sub(sh.started) / time.Second); i != s.secondAt {
		sh.seconds.add(s.secondAt, s.second)
		s.second.Reset()
		s.secondAt = i
	}
	latency.Record(s.second, took)
}

// reconnect retries with backoff until it works or the run stops. A
// first failure makes the server unreachable since lost, the moment the
// connection was lost.
func reconnect(ctx context.Context, v VU, sh *shared, lost time.Time) bool {
	const first = 100 * time.Millisecond
	backoff, hurry := first, sh.hurry
	for tries := 0; ; tries++ {
		if v.Reconnect(ctx) == nil {
			sh.health.reached(time.Now())
			return true
		}
		if tries == 0 {
			sh.health.unreachable(lost)
		}
		t := time.NewTimer(backoff)
		select {
		case <-sh.stop:
			t.Stop()
			return false
		case <-hurry:
			hurry, backoff = nil, first
		case <-t.C:
		}
		t.Stop()
		if hurry != nil {
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

// tickLoop records the series and reports progress each second, and has
// the run's health checked; a server given up ends the run (end).
func tickLoop(res *Result, states []*vuState, sh *shared, running *atomic.Int32, end func()) {
	cfg, phase, stop := sh.cfg, sh.phase, sh.stop
	t := time.NewTicker(time.Second)
	defer t.Stop()
	types := len(states[0].done)
	last := make([]int64, types)
	var lastErrs int64
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			p := Phase(phase.Load())
			cur := make([]int64, types)
			var errs int64
			for _, s := range states {
				for i := range cur {
					cur[i] += s.done[i].Load()
				}
				errs += s.errAll.Load()
			}
			delta := make([]int64, types)
			for i := range cur {
				delta[i] = cur[i] - last[i]
			}
			last = cur
			elapsed := now.Sub(res.Started)
			res.Series = append(res.Series, Point{T: elapsed.Round(time.Millisecond).Seconds(), Phase: p.String(), Counts: delta, Errors: errs - lastErrs})
			lastErrs = errs
			if sh.health.check(now, states) {
				end()
			}
			if cfg.Progress != nil && p != PhaseDone {
				tk := Tick{Phase: p, Elapsed: elapsed, Counts: delta, Errors: errs, VUs: int(running.Load())}
				if cfg.Each > 0 {
					tk.Total = int64(cfg.Each) * int64(len(states))
					for _, c := range cur {
						tk.Done += c
					}
					tk.Done += errs
				} else {
					left := cfg.Rampup - elapsed
					if p == PhaseMeasure {
						left = cfg.Rampup + cfg.Duration - elapsed
					}
					tk.Left = max(left, 0)
				}
				cfg.Progress(tk)
			}
		}
	}
}

// sleep waits d unless stop closes first; it reports whether it slept.
func sleep(d time.Duration, stop <-chan struct{}) bool {
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

// wait waits d unless ctx ends first; it reports whether it waited.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
