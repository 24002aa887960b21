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

// A pooled run (Config.Connections) drives its VUs as terminals that
// share a few sessions, as a transaction monitor does. Terminals are not
// goroutines: each waits out its pacing on a timer, whose firing is the
// terminal's send, and queues for a session. Each session has one worker
// goroutine, which takes the next terminal queued, runs its transaction,
// records it in the session's own figures (merged as a VU's are), and
// arms the terminal's timer for its next one. Transactions run only on
// the workers, so only they grow deep stacks; a terminal is a few hundred
// bytes.

// pool is what a pooled run's workers and terminals share.
type pool struct {
	terms []*poolTerm
	// ready is the terminals sent and waiting for a session, in the order
	// they were sent. Each terminal is in it at most once, and it holds
	// them all, so a send never blocks.
	ready chan *poolTerm
	// rampup and vus are the whole run's: terminal id starts
	// rampup*id/vus into the run (rampDelay); part is the run's part,
	// whose terminals terms are.
	rampup time.Duration
	vus    int
	part   Part
	phase  *atomic.Int32
	// closing closes as the window's end edge is asked for.
	closing <-chan struct{}
	waits   []*sessionWaits // by session
	// inUse is the sessions lent now; inUseMax and queuedMax the most in
	// the window.
	inUse, inUseMax, queuedMax atomic.Int32
	// inUseAt and queuedAt count the window's samples at each level
	// (sample), for the p95s.
	inUseAt, queuedAt []int64
	seconds           seconds // the waits, second by second
}

// poolTerm is one terminal as the pool holds it.
type poolTerm struct {
	p     *pool
	id    int // in the whole run
	t     Terminal
	tx    int
	after time.Duration // its pacing after tx
	sent  int64         // when tx was sent (UnixNano); 0 before the first
	timer *time.Timer
}

// sessionWaits is one session's figures of the waits for it: the
// window's, and the second's in hand.
type sessionWaits struct {
	window *hdrhistogram.Histogram
	second secondHist
}

// runPool is Run for a pooled run: it opens cfg.Connections sessions
// before the clock starts and drives cfg.VUs terminals over them.
func runPool(ctx context.Context, w Workload, cfg Config) (*Result, error) {
	pw, ok := w.(Pooled)
	switch {
	case !ok:
		return nil, errors.New("this workload's virtual users cannot share sessions")
	case cfg.Connections > cfg.VUs:
		return nil, fmt.Errorf("%d connections for %d virtual users: at most one each", cfg.Connections, cfg.VUs)
	case cfg.Each > 0:
		return nil, errors.New("a fixed amount of work runs without a pool of sessions")
	}
	if err := cfg.Part.check(cfg.Connections, "sessions"); err != nil {
		return nil, err
	}
	sessions, err := openAll(ctx, cfg.Part.IDs(cfg.Connections), placed(cfg, pw.NewSession))
	if err != nil {
		return nil, err
	}
	sched, err := meet(ctx, cfg, sessions)
	if err != nil {
		return nil, err
	}
	r := newRunState(ctx, cfg, sched, len(sessions), len(w.TxNames()), len(w.TallyNames()))
	r.pool = newPool(pw, r, len(sessions))
	return r.drive(w, r.startPool(sessions))
}

// newPool makes the terminals of the run's part, each with its id in the
// whole run.
func newPool(w Pooled, r *runState, sessions int) *pool {
	ids := r.cfg.Part.IDs(r.cfg.VUs)
	n := len(ids)
	p := &pool{
		terms: make([]*poolTerm, n), ready: make(chan *poolTerm, n), rampup: r.cfg.Rampup, vus: r.cfg.VUs, part: r.cfg.Part,
		phase: &r.phase, closing: r.edges[1].asked,
		waits: make([]*sessionWaits, sessions), inUseAt: make([]int64, sessions+1), queuedAt: make([]int64, n+1),
	}
	for i, id := range ids {
		p.terms[i] = &poolTerm{p: p, id: id, t: w.NewTerminal(id)}
	}
	for i := range p.waits {
		p.waits[i] = &sessionWaits{window: latency.NewHistogram(), second: secondHist{h: latency.NewSecondHistogram()}}
	}
	return p
}

// started is how many of the part's terminals have started elapsed into
// the run, as startPool spreads the whole run's over the ramp-up: in the
// pacing before their first transaction or past it, as a VU of a run
// without a pool counts once started.
func (p *pool) started(elapsed time.Duration) int {
	if p.vus <= 1 || p.rampup <= 0 {
		return len(p.terms)
	}
	return p.part.Share(min(p.vus, int(elapsed*time.Duration(p.vus)/p.rampup)+1))
}

// send is the terminal's timer firing: its transaction is sent, and
// queues for a session.
func (pt *poolTerm) send() {
	pt.sent = time.Now().UnixNano()
	pt.p.ready <- pt
	if pt.p.open() {
		raise(&pt.p.queuedMax, int32(len(pt.p.ready)))
	}
}

// arm draws the terminal's next transaction and sends it once wait and
// its pacing before it have passed.
func (pt *poolTerm) arm(wait time.Duration) {
	pt.tx = pt.t.Next()
	before, after := pt.t.Pacing(pt.tx)
	wait += before
	pt.after = after
	if pt.timer == nil {
		pt.timer = time.AfterFunc(wait, pt.send)
		return
	}
	pt.timer.Reset(wait)
}

// open says whether the window is open and not yet closing: the sessions
// in use and the queue leave out the end edge's hold, in which sessions
// idle and terminals queue for the rig, not for the database.
func (p *pool) open() bool {
	select {
	case <-p.closing:
		return false
	default:
		return Phase(p.phase.Load()) == PhaseMeasure
	}
}

// raise makes m at least v.
func raise(m *atomic.Int32, v int32) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}

// startPool starts a worker for each session and each terminal at its
// moment of the ramp-up; the returned channel closes once every worker
// has stopped and every terminal with it.
func (r *runState) startPool(sessions []Session) <-chan struct{} {
	p := r.pool
	// Every timer is made before a worker starts, which then sees it.
	for _, pt := range p.terms {
		pt.arm(time.Until(r.started.Add(rampDelay(r.cfg.Rampup, pt.id, p.vus))))
	}
	var wg sync.WaitGroup
	for i, se := range sessions {
		ve := &vuEdges{all: r.edges, f: se}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer exitcode.Recover(r.abort) // as a VU's (startVUs)
			defer se.Close()
			defer ve.leave(r.work)
			r.runSession(r.work, se, ve, r.states[i], p.waits[i])
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); p.sample(r.stop) }()
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		// Terminals still pacing or queued are like VUs caught in
		// their pacing as the run ends: they have nothing in flight.
		for _, pt := range p.terms {
			pt.timer.Stop()
		}
		close(finished)
	}()
	return finished
}

// sample counts, 100 times a second in the window, the sessions in use
// and the terminals queued, for their p95s.
func (p *pool) sample(stop <-chan struct{}) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if p.open() {
				p.inUseAt[p.inUse.Load()]++
				p.queuedAt[len(p.ready)]++
			}
		}
	}
}

// runSession is one session's worker: take the next terminal queued,
// run its transaction, record it, and arm the terminal for its next.
func (r *runState) runSession(ctx context.Context, se Session, ve *vuEdges, s *vuState, ws *sessionWaits) {
	p, stop, l := r.pool, r.stop, &lent{se: se}
	s.begin()
	for {
		// An edge asked for comes first, so that a busy pool reaches it.
		if !ve.sleep(ctx, 0, stop) {
			return
		}
		var pt *poolTerm
		select {
		case <-stop:
			return
		case <-ve.asked():
			if !ve.reach(ctx, stop) {
				return
			}
			continue
		case pt = <-p.ready:
		}
		if !r.serve(ctx, l, pt, ve, s, ws) {
			return
		}
		select {
		case <-stop:
			return
		default:
			pt.arm(pt.after)
		}
	}
}

// serve runs pt's transaction on se and records it; it reports whether
// the worker goes on.
func (r *runState) serve(ctx context.Context, l *lent, pt *poolTerm, ve *vuEdges, s *vuState, ws *sessionWaits) bool {
	p, cfg := r.pool, r.cfg
	picked := time.Now()
	if n := p.inUse.Add(1); p.open() {
		raise(&p.inUseMax, n)
	}
	t := s.scratch
	s.began.Store(picked.UnixNano())
	l.t = pt.t
	tr, err := attempt(ctx, l, pt.tx, t, cfg, &r.phase)
	ended := time.Now()
	p.inUse.Add(-1)
	s.ended.Store(ended.UnixNano())
	r.health.ended(ended.UnixNano())
	if errors.Is(err, ErrAbort) {
		r.abort(err)
		return false
	}
	if abandoned(ctx, err) {
		return false
	}
	// The rig's pause at an edge is not the database's: it comes out of
	// the wait, and so of the response time.
	var held time.Duration
	for _, e := range ve.all[:ve.next] {
		held += e.held(pt.sent, picked.UnixNano())
	}
	waited := picked.Sub(time.Unix(0, pt.sent)) - held
	took := ended.Sub(time.Unix(0, pt.sent)) - held
	class := r.count(s, pt.tx, err, tr, t, ended, took)
	if o := outcomeOf(err); o == Committed || o == RolledBack {
		ws.second.record(&p.seconds, r.started, ended, waited)
		if Phase(r.phase.Load()) == PhaseMeasure {
			latency.Record(ws.window, waited)
		}
	}
	if class == dbtarget.ErrConnLost {
		// The terminal goes back to thinking; the session reconnects
		// before it takes another, and after the window has nothing
		// more to do.
		return reconnect(ctx, l.se, &r.shared, ended) && Phase(r.phase.Load()) != PhaseDone
	}
	return true
}

// lent is a session lent to one terminal, as attempt runs it; each
// worker reuses its own.
type lent struct {
	se Session
	t  Terminal
}

func (l *lent) Run(ctx context.Context, tx int, t Tally) error { return l.se.Run(ctx, l.t, tx, t) }

// Pool is a pooled run's sessions over the measured window.
type Pool struct {
	Terminals, Sessions int
	// InUseMax is the most sessions lent at once; InUseP95 the p95 of
	// the sessions in use, sampled 100 times a second. QueuedMax and
	// QueuedP95 are the same of the terminals waiting for one.
	InUseMax, InUseP95, QueuedMax, QueuedP95 int
	// AllInUse is the share of the samples with every session lent.
	AllInUse float64
	// Wait is the waits for a session of the window's completed
	// transactions, which their response times include.
	Wait *hdrhistogram.Histogram
	// WaitFirst and WaitLast are the wait's p90 over the first and the
	// last third of the window (whole seconds); zero in a window under
	// three seconds.
	WaitFirst, WaitLast time.Duration
	// Waits are the waits' percentiles of each point of the Result's
	// Series (the same index), as its Latency is of the responses; nil
	// where none completed.
	Waits []*latency.Percentiles
}

// Verdict says, in one line, that the pool was too small for the load
// offered: every session in use most of the time (p95) while terminals
// waited 50 ms or more for one (p90). It is empty otherwise. Terminals
// wait for their answer before thinking again, so the queue is bounded by
// them and the wait levels off once the pool is full (within the
// ramp-up, often) instead of growing for ever: the level is the sign,
// and a growth over the window, where there is one, is named with it.
func (p *Pool) Verdict() string {
	waited := time.Duration(p.Wait.ValueAtQuantile(90)) * time.Microsecond
	if p.InUseP95 < p.Sessions || waited < 50*time.Millisecond {
		return ""
	}
	how := "was " + shortDuration(waited)
	if p.WaitLast > 2*p.WaitFirst && p.WaitLast > 50*time.Millisecond {
		how = "grew from " + shortDuration(p.WaitFirst) + " to " + shortDuration(p.WaitLast)
	}
	return fmt.Sprintf("The %s all in use %.0f%% of the window and the wait for one %s (p90): "+
		"%d terminals need a larger pool; response times include the wait.",
		sessionsWere(p.Sessions), 100*p.AllInUse, how, p.Terminals)
}

// sessionsWere is "20 sessions were", "1 session was".
func sessionsWere(n int) string {
	if n == 1 {
		return "1 session was"
	}
	return fmt.Sprintf("%d sessions were", n)
}

// shortDuration is "40 ms" under a second, "2.1 s" above.
func shortDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// result gathers the pool's figures over res, once every worker has
// stopped.
func (p *pool) result(res *Result) *Pool {
	out := &Pool{Terminals: len(p.terms), Sessions: len(p.waits), Wait: latency.NewHistogram(),
		InUseMax: int(p.inUseMax.Load()), QueuedMax: int(p.queuedMax.Load())}
	for _, ws := range p.waits {
		out.Wait.Merge(ws.window)
		p.seconds.add(ws.second.at, ws.second.h)
	}
	out.Waits = make([]*latency.Percentiles, len(res.Series))
	for k, pt := range res.Series {
		h := p.seconds.ending(pt.T)
		out.Waits[k] = percentiles(h)
		if !p.part.Whole() {
			res.Series[k].WaitHist = h
		}
	}
	var samples int64
	out.InUseP95, samples = p95(p.inUseAt)
	out.QueuedP95, _ = p95(p.queuedAt)
	if samples > 0 {
		out.AllInUse = float64(p.inUseAt[len(p.inUseAt)-1]) / float64(samples)
	}
	if res.WindowStart.IsZero() {
		return out
	}
	from := int(res.WindowStart.Sub(res.Started).Seconds() + 0.999)
	to := int(res.WindowEnd.Sub(res.Started).Seconds())
	if third := (to - from) / 3; third > 0 {
		out.WaitFirst = p.seconds.p90(from, from+third)
		out.WaitLast = p.seconds.p90(to-third, to)
	}
	return out
}

// p95 is the level at or under which 95% of the samples counted by level
// in at lie, and the samples' number.
func p95(at []int64) (level int, samples int64) {
	for _, n := range at {
		samples += n
	}
	var below int64
	for level, n := range at {
		if below += n; below*100 >= samples*95 {
			return level, samples
		}
	}
	return 0, samples
}

// p90 is the p90 of the seconds [from, to) together.
func (s *seconds) p90(from, to int) time.Duration {
	h := latency.NewSecondHistogram()
	for i := from; i < to && i < len(s.h); i++ {
		if si := s.hist(i); si != nil {
			h.Merge(si)
		}
	}
	return time.Duration(h.ValueAtQuantile(90)) * time.Microsecond
}
