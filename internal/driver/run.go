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
	"github.com/dbrig/dbrig/internal/exitcode"
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
	// MaxRetries bounds the retries of one transaction: 0 takes
	// DefaultMaxRetries, NoRetries retries none.
	MaxRetries int
	// Backoff is the wait before each retry; the zero Backoff retries at
	// once.
	Backoff Backoff
	// WindowEdge is called as the measured window starts (start true) and
	// ends, so that database-side counters are read at the same edges. Its
	// ctx ends LostAfter after the server was last heard from, or as Quit
	// closes; an error once that deadline has passed gives the server up
	// as silent.
	WindowEdge func(ctx context.Context, start bool) error
	// Progress is called about once a second.
	Progress func(Tick)
	// Grace is how long VUs may take to finish their current transaction
	// once the run ends, before it is cancelled (default 30s). A window's
	// edge holds them no longer than StallAfter of it, or the window would
	// stretch with a transaction that does not end.
	Grace time.Duration
	// Probe, where set, asks the server something of its own (not of the
	// measured database's counters), so that a stall in which the server
	// answers it is told from one in which the server answers nothing.
	Probe func(ctx context.Context) error
	// Sever, where set, closes every connection of the run's VUs: for
	// calls that a cancelled context does not reach.
	Sever func()
	// Quit closes on the user's second interrupt: the run stops waiting,
	// for virtual users at an edge, the edge's read, a server out of reach
	// or the transactions in hand, and returns what it has.
	Quit <-chan struct{}
	// Observer, when set, follows the run as it happens.
	Observer Observer
	// Actions are done to the system under test at set moments of the run.
	Actions []Action
	// LostAfter is how long the server may stay out of reach, virtual
	// users failing to reconnect, before the run gives it up and ends
	// (default dbtarget.ReconnectLimit).
	LostAfter time.Duration
	// Connections, when positive, makes the VUs terminals that share this
	// many sessions, each holding one only while its transaction runs; the
	// workload must be Pooled, and the run a timed one.
	Connections int
	// Part, when set, makes this process one part of a run split over
	// several: VUs and Connections stay the whole run's, and it opens and
	// runs only Part.IDs(VUs) virtual users (terminals) and
	// Part.Share(Connections) sessions (ids Part.IDs(Connections)), each
	// with its id in the whole run and started at its moment of the whole
	// run's ramp-up.
	Part Part
	// Meet, when set, is called once every VU (session) is open and
	// flushed, and returns when the run starts, ends its ramp-up and
	// closes its window (a part's, whose parts meet). Its error ends the
	// run before it starts, everything opened closed. Without it the run
	// starts as its VUs are open, and its window lasts Duration.
	Meet func(ctx context.Context) (Schedule, error)
	// Place, where set, is the context VU (pooled, session) id is opened
	// with, given the run's: what the target reads there (which of its
	// nodes the session goes to, dbtarget.WithNode).
	Place func(ctx context.Context, id int) context.Context
	// StallAfter is how long no transaction may end while virtual users
	// wait in one before the stretch counts as a stall (default 3 s; runs
	// of a fixed amount of work, whose transactions may be long, have none).
	StallAfter time.Duration
}

// DefaultStallAfter is Config.StallAfter where it is zero.
const DefaultStallAfter = 3 * time.Second

// Action is something done to the system under test at a set moment of a
// run, such as killing its server; what it does is the caller's, when is
// the driver's, on the clock of the series.
type Action struct {
	At time.Duration // since the run started
	// Do does it; note records, as an event of the run, what is happening
	// as it is called. An error ends the run with that error: the system
	// under test is no longer what the run measures.
	Do func(ctx context.Context, note func(what string)) error
	// Outage asks for what the action costs the application: from its
	// start until every virtual user (pooled, every session) has
	// completed a transaction after its return, the longest stretch
	// without a completion, overall and for each (Result.ActionOutages).
	// An action that stops the server, or moves it, asks for it.
	Outage bool
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
	// InDoubt is a transaction whose commit was sent and never answered
	// (ErrInDoubt): neither completed nor failed.
	InDoubt
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
	// VUs running; in a pooled run, the terminals started.
	VUs int
	// Sessions in use and terminals queued for one, now (pooled runs).
	Sessions, Queued int
}

// TxResult is the measured window's figures for one transaction type.
type TxResult struct {
	Name   string
	Count  int64 // completed: committed or intentionally rolled back
	Errors int64
	// InDoubt is the transactions whose commit was sent and never
	// answered (ErrInDoubt), in neither Count nor Errors.
	InDoubt int64
	// Retries counts the failed attempts that were retried and ended in
	// the window, whichever transaction they were of.
	Retries int64
	// Aborts are the Errors that the target said were worth another try
	// after the last retry (MaxRetries).
	Aborts int64
	// Retrying is the time the completed and failed transactions spent,
	// inside their latency, in attempts that failed and in the backoffs
	// after them (from the first attempt's start to the last one's), and
	// Backoff that of the backoffs alone; Busy is the whole time of the
	// window's completed and failed transactions, from their first
	// attempts' starts.
	Retrying, Backoff, Busy time.Duration
	ErrorSample             string
	Hist                    *hdrhistogram.Histogram
}

// Point is one second of the series: completions per type, all phases.
type Point struct {
	T      float64 // seconds since the run started
	Phase  string
	Counts []int64
	// Errors is the transactions that failed in the second, of all types;
	// InDoubt those whose commit went unanswered (ErrInDoubt).
	Errors, InDoubt int64
	// Latency is the second's completed transactions' percentiles, all
	// types; nil when none completed.
	Latency *latency.Percentiles
	// Hist and WaitHist are, in a part of a run (Config.Part) only, the
	// second's histograms (latency.NewSecondHistogram's precision) of
	// what Latency and Pool.Waits summarize: the latencies of its
	// completed transactions, all types, and a pooled run's waits for a
	// session. They are nil in a whole run, and in a second with none.
	Hist, WaitHist *hdrhistogram.Histogram
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
	// ActionOutages are what each Action that asked for it (Outage) cost
	// the application, in the order the actions started.
	ActionOutages []ActionOutage
	// Outages are the stretches without a server: from a lost connection
	// that would not reopen to the first that did. With ServerLost, the
	// last one lasted LostAfter, or to the window's end, and ended the run.
	Outages []Span
	// ServerLost says the run ended without a server; LostSilent that
	// it had stopped answering, rather than refused connections.
	ServerLost, LostSilent bool
	// Late is how long after it was asked to close the window did close:
	// its edge waited for the transactions in hand, and Stuck virtual
	// users were still in one when it stopped waiting.
	Late  time.Duration
	Stuck int
	// Stalls are the stretches of StallAfter or more in which no
	// transaction ended while virtual users waited in one.
	Stalls []Span
	// Pool is a pooled run's sessions (Config.Connections); nil otherwise.
	Pool *Pool
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

// Run drives w until the window ends or ctx is cancelled (Ctrl-C), which
// ends the window early and marks the result interrupted. VUs finish the
// transaction in hand before they stop. A transaction that fails with
// ErrAbort ends the run at once, and Run returns its error.
func Run(ctx context.Context, w Workload, cfg Config) (*Result, error) {
	if cfg.VUs < 1 {
		return nil, fmt.Errorf("need at least one virtual user, got %d", cfg.VUs)
	}
	if err := cfg.Part.check(cfg.VUs, "virtual users"); err != nil {
		return nil, err
	}
	if cfg.Each > 0 && (cfg.Meet != nil || !cfg.Part.Whole()) {
		return nil, errors.New("a fixed amount of work runs in one process, without a schedule")
	}
	cfg = cfg.withDefaults()
	if cfg.Connections > 0 {
		return runPool(ctx, w, cfg)
	}
	ids := cfg.Part.IDs(cfg.VUs)
	vus, err := openAll(ctx, ids, placed(cfg, w.NewVU))
	if err != nil {
		return nil, err
	}
	sched, err := meet(ctx, cfg, vus)
	if err != nil {
		return nil, err
	}
	r := newRunState(ctx, cfg, sched, len(vus), len(w.TxNames()), len(w.TallyNames()))
	if r.cfg.Each > 0 {
		// Every transaction of a fixed amount of work counts, so the
		// window is open before the first one starts.
		r.openWindow()
	}
	return r.drive(w, r.startVUs(vus, ids))
}

// drive runs the window with the VUs (or a pool's sessions) started,
// finished closing once they have all stopped, and gathers the result.
func (r *runState) drive(w Workload, finished <-chan struct{}) (*Result, error) {
	defer r.end()
	defer r.cancelQuit()
	defer r.cancelWork()
	acted := r.act()
	ticks := r.startTicker()
	r.measure(finished)
	r.stopVUs(finished)
	<-ticks
	acted.Wait()
	if r.abortErr != nil {
		return nil, r.abortErr
	}
	res := r.collect(w.TxNames(), len(w.TallyNames()))
	if r.pool != nil {
		res.Pool = r.pool.result(res)
	}
	return res, nil
}

// withDefaults fills in what cfg leaves zero; a fixed amount of work has
// no ramp-up and no stalls.
func (cfg Config) withDefaults() Config {
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	if cfg.Grace == 0 {
		cfg.Grace = 30 * time.Second
	}
	if cfg.LostAfter == 0 {
		cfg.LostAfter = dbtarget.ReconnectLimit
	}
	if cfg.StallAfter == 0 {
		cfg.StallAfter = DefaultStallAfter
	}
	if cfg.Each > 0 {
		cfg.Rampup, cfg.StallAfter = 0, -1
	}
	return cfg
}

// openAll opens the VUs (or a pool's sessions) of ids, the run's or its
// part's, before the clock starts, so a target that refuses connections
// fails the run at once instead of part-way through ramp-up. Each one's
// start-up is published before anything is read. The result is indexed
// as ids.
func openAll[T interface{ Close() error }](ctx context.Context, ids []int, open func(context.Context, int) (T, error)) ([]T, error) {
	all := make([]T, len(ids))
	for i, id := range ids {
		v, err := open(ctx, id)
		if err == nil {
			if err = flush(ctx, v); err != nil {
				v.Close()
			}
		}
		if err != nil {
			closeAll(all[:i])
			return nil, err
		}
		all[i] = v
	}
	return all, nil
}

// placed is open with the context of holder id's opening given by
// cfg.Place, where it is set.
func placed[T any](cfg Config, open func(context.Context, int) (T, error)) func(context.Context, int) (T, error) {
	if cfg.Place == nil {
		return open
	}
	return func(ctx context.Context, id int) (T, error) { return open(cfg.Place(ctx, id), id) }
}

// closeAll closes what openAll opened, when the run ends before it starts.
func closeAll[T interface{ Close() error }](all []T) {
	for _, o := range all {
		o.Close()
	}
}

// meet is the run's schedule once its VUs (sessions) all are open: the
// one Meet returns, once its Start has come; without Meet, from now. On
// Meet's error it closes them all. Ctrl-C while it waits for Start ends
// the run as one interrupted in its ramp-up.
func meet[T interface{ Close() error }](ctx context.Context, cfg Config, all []T) (Schedule, error) {
	if cfg.Meet == nil {
		now := time.Now()
		return Schedule{Start: now, Open: now.Add(cfg.Rampup)}, nil
	}
	s, err := cfg.Meet(ctx)
	if err == nil {
		err = s.check()
	}
	if err != nil {
		closeAll(all)
		return Schedule{}, err
	}
	wait(ctx, time.Until(s.Start))
	return s, nil
}

// runState is one run as it goes: what its VUs and ticker share, their
// figures, the window's edges, and how the run ends.
type runState struct {
	shared
	// ctx is the caller's: its end is Ctrl-C, which marks the result
	// interrupted.
	ctx context.Context
	res *Result
	// ended ends the window early (end): Ctrl-C, an aborting
	// transaction, a server given up.
	ended context.Context
	end   context.CancelFunc
	// work outlives stop by the grace period so in-flight transactions
	// can finish instead of being cut off mid-statement; quit (the
	// caller's Quit, as a context) ends it at once.
	work       context.Context
	cancelWork context.CancelFunc
	quit       context.Context
	cancelQuit context.CancelFunc
	abortOnce  sync.Once
	abortErr   error
	states     []*vuState
	// edges are the window's start and end, where the VUs stop while it
	// is read (see Flusher).
	edges []*edge
	// running counts the VUs running (a pooled run's terminals are
	// counted by pool.started).
	running atomic.Int32
	// pool is a pooled run's (Config.Connections); nil otherwise.
	pool *pool
	// sched is the run's instants; Close is zero without Config.Meet,
	// and the window then lasts Duration.
	sched Schedule
}

// newRunState makes a run whose holders (VUs, or a pool's sessions) each
// keep their own figures and stop at the window's edges.
func newRunState(ctx context.Context, cfg Config, sched Schedule, holders, types, tallies int) *runState {
	r := &runState{ctx: ctx, sched: sched, states: make([]*vuState, holders), edges: []*edge{newEdge(holders), newEdge(holders)}}
	r.ended, r.end = context.WithCancel(ctx)
	r.quit, r.cancelQuit = untilClosed(context.WithoutCancel(ctx), cfg.Quit)
	r.work, r.cancelWork = context.WithCancel(r.quit)
	r.cfg, r.stop, r.hurry, r.abort = &cfg, make(chan struct{}), make(chan struct{}), r.abortWith
	r.setPhase(PhaseRampup)
	r.res = &Result{Started: sched.Start}
	r.started = r.res.Started
	r.health = newHealth(r.quit, r.started, cfg.LostAfter, cfg.StallAfter, cfg.Probe)
	for i := range r.states {
		r.states[i] = newVUState(types, tallies)
		r.states[i].id = i
	}
	return r
}

// abortWith ends the run with err, the first abort's.
func (r *runState) abortWith(err error) {
	r.abortOnce.Do(func() { r.abortErr = err; r.end() })
}

func (r *runState) setPhase(p Phase) {
	r.phase.Store(int32(p))
	if r.cfg.Observer != nil {
		r.cfg.Observer.Phase(p)
	}
}

// startVUs starts each VU, of id ids[i] in the whole run, at its moment
// of the ramp-up; the returned channel closes once every one has stopped.
// A fixed amount of work has no start edge to stop at: its VUs were
// flushed as they opened, and start once the window is open.
func (r *runState) startVUs(vus []VU, ids []int) <-chan struct{} {
	first := 0
	if r.cfg.Each > 0 {
		first = 1
	}
	var wg sync.WaitGroup
	for i, v := range vus {
		delay := time.Until(r.started.Add(rampDelay(r.cfg.Rampup, ids[i], r.cfg.VUs)))
		ve := &vuEdges{all: r.edges, next: first, f: v}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A panic in the workload's code ends the run with it, as an
			// *exitcode.Panic, once the VU has left the edges and closed.
			defer exitcode.Recover(r.abort)
			defer v.Close()
			defer ve.leave(r.work)
			if !ve.sleep(r.work, delay, r.stop) {
				return
			}
			r.running.Add(1)
			defer r.running.Add(-1)
			runVU(r.work, v, ve, r.states[i], &r.shared)
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	return finished
}

// startTicker starts the series and the progress; the returned channel
// closes as the ticker stops, with stop. A server given up ends the run.
func (r *runState) startTicker() <-chan struct{} {
	ticks := make(chan struct{})
	go func() {
		defer close(ticks)
		r.tickLoop()
	}()
	return ticks
}

// measure runs the window: the ramp-up, then the duration; or the fixed
// amount of work, to its last transaction. Ctrl-C, an abort or a server
// given up end it early.
func (r *runState) measure(finished <-chan struct{}) {
	switch {
	case r.cfg.Each > 0:
		select {
		case <-finished:
		case <-r.ended.Done():
			r.res.Interrupted = r.ctx.Err() != nil
			// The work stopped short counts for nothing, and what is in
			// hand may take minutes (the CPU test's loop): it is
			// cancelled, not waited for.
			r.cancelWork()
		}
		r.closeWindow()
	case wait(r.ended, time.Until(r.sched.Open)):
		r.openWindow()
		if !wait(r.ended, r.windowLeft()) {
			r.res.Interrupted = r.ctx.Err() != nil
		}
		r.closeWindow()
	default:
		// Ctrl-C, or a server lost, during ramp-up.
		r.res.Interrupted = r.ctx.Err() != nil
		r.setPhase(PhaseDone)
		r.health.giveUp(time.Now())
	}
}

// windowLeft is how long the window, just opened, lasts: to the
// schedule's Close, or Duration.
func (r *runState) windowLeft() time.Duration {
	if r.sched.Close.IsZero() {
		return r.cfg.Duration
	}
	return time.Until(r.sched.Close)
}

// openWindow holds the VUs at the start edge while it is read, then lets
// them go on, measured. With a schedule they stay still for its Hold
// after Open, and the edge is read halfway through.
func (r *runState) openWindow() {
	if r.cfg.Each == 0 {
		r.edges[0].hold(r.holdFor(), r.health.gone, r.quit.Done())
	}
	sleepUntil(r.sched.Open.Add(r.sched.Hold / 2))
	r.readEdge(true)
	sleepUntil(r.sched.Open.Add(r.sched.Hold))
	r.res.WindowStart = time.Now()
	r.setPhase(PhaseMeasure)
	r.edges[0].release()
}

// closeWindow holds the VUs at the end edge while it is read: with a
// schedule, Hold/2 after it was asked for at Close (or before, when the
// run ends early).
func (r *runState) closeWindow() {
	asked := time.Now()
	if !r.sched.Close.IsZero() && r.sched.Close.Before(asked) {
		asked = r.sched.Close
	}
	// Virtual users reconnecting are hurried, and stop at the edge
	// once they are back (a reconnect does not stop there).
	close(r.hurry)
	r.res.Stuck = r.edges[1].hold(r.holdFor(), r.health.gone, r.quit.Done())
	r.setPhase(PhaseDone)
	r.res.WindowEnd = time.Now()
	r.res.Late = r.res.WindowEnd.Sub(asked)
	sleepUntil(asked.Add(r.sched.Hold / 2))
	// A window that closes without a server waits for it, up to
	// LostAfter since it went; without it the run ends as lost, and
	// its edge has nothing to read.
	if r.health.await(r.quit.Done()) {
		r.readEdge(false)
	}
	r.edges[1].release()
}

// holdFor is how long an edge waits for the virtual users to finish the
// transaction in hand: Grace, but no longer than a stall takes to be
// one. A transaction that has not ended by then counts on neither side of
// the edge, the database's count read before it commits.
func (r *runState) holdFor() time.Duration {
	if r.cfg.StallAfter > 0 {
		return min(r.cfg.Grace, r.cfg.StallAfter)
	}
	return r.cfg.Grace
}

// readEdge reads the window's edge, within LostAfter of when the server
// was last heard from: a read it does not answer by then gives it up as
// silent, and ends the run.
func (r *runState) readEdge(start bool) {
	if r.cfg.WindowEdge == nil || r.quit.Err() != nil {
		return
	}
	ctx, cancel := r.health.bounded(r.quit)
	defer cancel()
	since := r.health.silentSince(time.Now())
	if err := r.cfg.WindowEdge(ctx, start); err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.health.giveUpSilent(since.UnixNano(), time.Now())
		r.end()
	}
}

// stopVUs stops the VUs, which finish the transaction in hand; those
// still in one after Grace are cancelled, and at once when the server was
// given up (nothing in hand will end) or on Quit. A VU whose call ignores
// its cancellation has its connection severed (Config.Sever).
func (r *runState) stopVUs(finished <-chan struct{}) {
	close(r.stop)
	if r.health.gaveUp() {
		r.cancelWork()
	}
	select {
	case <-finished:
		return
	case <-time.After(r.cfg.Grace):
		r.cancelWork()
	case <-r.work.Done():
	}
	select {
	case <-finished:
		return
	case <-time.After(severAfter):
	}
	if r.cfg.Sever != nil {
		r.cfg.Sever()
	}
	<-finished
}

// severAfter is how long a VU may take to return once its call has been
// cancelled before its connection is severed.
const severAfter = 2 * time.Second

// collect merges the VUs' figures into the result.
func (r *runState) collect(names []string, tallies int) *Result {
	res, h := r.res, r.health
	h.finish(time.Now())
	res.Outages, res.ServerLost, res.LostSilent, res.Stalls = h.outages, h.lost, h.silent, h.stalls
	end := res.WindowEnd
	if end.IsZero() {
		end = time.Now()
	}
	res.ActionOutages = r.outages.result(r.states, res.Started, end.UnixNano(), r.pool != nil)
	for _, s := range r.states {
		r.seconds.add(s.second.at, s.second.h)
	}
	r.seconds.attach(res.Series, !r.cfg.Part.Whole())
	res.Tx = make([]TxResult, len(names))
	for i, n := range names {
		tr := TxResult{Name: n, Hist: latency.NewHistogram()}
		for _, s := range r.states {
			tr.Count += s.count[i]
			tr.Errors += s.errs[i]
			tr.InDoubt += s.doubts[i]
			tr.Retries += s.retries[i]
			tr.Aborts += s.aborts[i]
			tr.Retrying += time.Duration(s.retrying[i])
			tr.Backoff += time.Duration(s.backoff[i])
			tr.Busy += time.Duration(s.busy[i])
			if tr.ErrorSample == "" {
				tr.ErrorSample = s.sample[i]
			}
			tr.Hist.Merge(s.hist[i])
		}
		res.Tx[i] = tr
	}
	res.Tally = make(Tally, tallies)
	for _, s := range r.states {
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
	return res
}

// act does each action at its moment, unless the run stops first, and
// records what they note in the result's events; an Outage action is
// watched from its start (outages). The returned group ends when every
// action started has finished: one under way when the window closes runs
// to its end, so that the run never leaves the system half done.
func (r *runState) act() *sync.WaitGroup {
	var wg sync.WaitGroup
	var mu sync.Mutex
	res := r.res
	note := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		t := time.Since(res.Started).Round(time.Millisecond).Seconds()
		res.Events = append(res.Events, Event{T: t, What: what})
	}
	for _, a := range r.cfg.Actions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !sleep(time.Until(res.Started.Add(a.At)), r.stop) {
				return
			}
			do := note
			if a.Outage {
				w := r.outages.start(len(r.states))
				defer w.returned()
				do = func(what string) {
					if w.what == "" {
						w.what = what
					}
					note(what)
				}
			}
			if err := a.Do(r.work, do); err != nil {
				r.abort(err)
			}
		}()
	}
	return &wg
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

// untilClosed is ctx, cancelled as quit closes (nil never does) or as
// the returned cancel is called.
func untilClosed(ctx context.Context, quit <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if quit != nil {
		go func() {
			select {
			case <-quit:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// sleepUntil sleeps until t, if it is still to come.
func sleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
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
