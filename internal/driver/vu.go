package driver

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/latency"
)

// vuState is one VU's figures. The VU goroutine alone writes the
// histograms and the tally; the atomic counters are read by the ticker.
type vuState struct {
	done    []atomic.Int64 // completions per type, all phases, for progress
	count   []int64        // completions per type in the window
	errs    []int64
	doubts  []int64 // the window's transactions in doubt, per type
	retries []int64
	// aborts are the window's errors, per type, that the target said were
	// worth another try after the last retry; retrying the time, in
	// nanoseconds, its transactions spent in attempts that failed and in
	// the backoffs after them, and backoff that of the backoffs alone.
	aborts, retrying, backoff []int64
	// busy is the time, in nanoseconds, of the window's transactions that
	// completed or failed, from their first attempt's start.
	busy    []int64
	sample  []string
	byClass [dbtarget.ErrUserRollback + 1]int64 // the window's errors by class
	hist    []*hdrhistogram.Histogram
	tally   Tally
	scratch Tally // one transaction's counters, reused
	// errAll and doubtAll count the failed and in-doubt transactions,
	// all phases, for the series.
	errAll, doubtAll atomic.Int64
	// began and ended are when the VU's last transaction began and ended
	// (UnixNano), for the stall check; ended starts as the VU starts.
	began, ended atomic.Int64
	// id is the holder's index in the run's; start is when it started,
	// and lastOK when its last transaction completed (0 before the
	// first), which only its own goroutine writes (see outages).
	id            int
	start, lastOK int64
	// second is the latencies of the second in hand.
	second secondHist
}

// secondHist is a holder's histogram of the second at (since the run
// started), until that second is over and handed over.
type secondHist struct {
	h  *hdrhistogram.Histogram
	at int
}

// record adds took, of something that ended at ended, handing the
// previous second over to to first.
func (sc *secondHist) record(to *seconds, started, ended time.Time, took time.Duration) {
	if i := int(ended.Sub(started) / time.Second); i != sc.at {
		to.add(sc.at, sc.h)
		sc.h.Reset()
		sc.at = i
	}
	latency.Record(sc.h, took)
}

func newVUState(types, tallies int) *vuState {
	s := &vuState{
		done: make([]atomic.Int64, types), count: make([]int64, types), errs: make([]int64, types), doubts: make([]int64, types),
		retries: make([]int64, types), aborts: make([]int64, types), retrying: make([]int64, types), backoff: make([]int64, types), busy: make([]int64, types), sample: make([]string, types), hist: make([]*hdrhistogram.Histogram, types),
		tally: make(Tally, tallies), scratch: make(Tally, tallies), second: secondHist{h: latency.NewSecondHistogram()},
	}
	for i := range s.hist {
		s.hist[i] = latency.NewHistogram()
	}
	return s
}

// begin is the holder's, as it starts.
func (s *vuState) begin() {
	s.start = time.Now().UnixNano()
	s.ended.Store(s.start)
}

// shared is what a run's virtual users see of it.
type shared struct {
	cfg   *Config
	phase atomic.Int32
	// stop closes as the run ends: the VUs stop after the transaction
	// in hand.
	stop chan struct{}
	// hurry closes as the window does: virtual users reconnecting then
	// try every 100 ms, so that a server back shows at once.
	hurry   chan struct{}
	abort   func(error)
	started time.Time
	health  *health
	seconds seconds
	outages outages
}

// runVU is one VU's loop: pick, wait, run with retries, record, wait.
func runVU(ctx context.Context, v VU, ve *vuEdges, s *vuState, sh *shared) {
	cfg, stop := sh.cfg, sh.stop
	s.begin()
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
		began := time.Now()
		s.began.Store(began.UnixNano())
		tr, err := attempt(ctx, v, tx, t, cfg, &sh.phase)
		ended := time.Now()
		s.ended.Store(ended.UnixNano())
		sh.health.ended(ended.UnixNano())
		if errors.Is(err, ErrAbort) {
			sh.abort(err)
			return
		}
		if abandoned(ctx, err) {
			return
		}
		if sh.count(s, tx, err, tr, t, ended, ended.Sub(began)) == dbtarget.ErrConnLost {
			// A VU back after the window closed has nothing more to do:
			// its transactions would count on the database's side alone.
			if !reconnect(ctx, v, sh, ended) || Phase(sh.phase.Load()) == PhaseDone {
				return
			}
		}
		if !ve.sleep(ctx, after, stop) {
			return
		}
	}
}

// count records in s a transaction of type tx that ended at ended and
// took took, retries and all, its counters in t, tells the Observer, and
// returns its error's class: ErrOther when it completed, ErrConnLost when
// it is in doubt, whose connection died with its commit.
func (sh *shared) count(s *vuState, tx int, err error, tr tries, t Tally, ended time.Time, took time.Duration) dbtarget.ErrClass {
	o := outcomeOf(err)
	if sh.cfg.Observer != nil {
		sh.cfg.Observer.Transaction(tx, took, int(tr.retries), o)
	}
	class := dbtarget.ErrOther
	switch o {
	case Committed, RolledBack:
		s.done[tx].Add(1)
		recordSecond(s, sh, ended, took)
		sh.outages.completed(s, ended.UnixNano())
	case InDoubt:
		class = dbtarget.ErrConnLost
		s.doubtAll.Add(1)
	case Failed:
		class = sh.cfg.Classify(err)
		s.errAll.Add(1)
		if s.sample[tx] == "" {
			s.sample[tx] = human.OneLine(err)
		}
	}
	// A retry counts where its failed attempt ended, as the server's
	// counters count that attempt: a transaction that straddles an edge
	// (its backoffs can take seconds) has only its window's share.
	s.retries[tx] += tr.windowed
	if Phase(sh.phase.Load()) != PhaseMeasure {
		return class
	}
	s.retrying[tx] += int64(tr.retrying)
	s.backoff[tx] += int64(tr.backoff)
	if o != InDoubt {
		s.busy[tx] += int64(took)
	}
	switch o {
	case Committed, RolledBack:
		s.count[tx]++
		latency.Record(s.hist[tx], took)
		s.tally.Add(t)
	case InDoubt:
		s.doubts[tx]++
	case Failed:
		s.errs[tx]++
		s.byClass[class]++
		if class == dbtarget.ErrRetry {
			s.aborts[tx]++
		}
	}
	return class
}

// abandoned says a transaction failed because the run cancelled it (its
// server given up, its grace over, or Quit): its end is unknown, and it
// counts as neither a completion nor the database's failure.
func abandoned(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil
}

// runner runs a transaction: a VU, or a session lent to a terminal.
type runner interface {
	Run(ctx context.Context, tx int, t Tally) error
}

// tries is what retrying one transaction took: its retries, those of
// them whose failed attempt ended in the measured window (the server
// counted that attempt there), the time from its first attempt's start to
// its last one's (the attempts that failed and the backoffs after them),
// and the backoffs' own.
type tries struct {
	retries, windowed int64
	retrying, backoff time.Duration
}

// attempt runs tx, its counters in t, again while the target says its
// error is worth a retry, up to MaxRetries, each retry after a backoff;
// it returns what the retries took and the last error. The VU runs the
// same transaction again, inputs and all: only Next draws new ones.
func attempt(ctx context.Context, v runner, tx int, t Tally, cfg *Config, phase *atomic.Int32) (tr tries, err error) {
	clear(t)
	first := time.Now()
	err = v.Run(ctx, tx, t)
	// A commit in doubt may have happened: it is never run again.
	for err != nil && outcomeOf(err) == Failed && cfg.Classify(err) == dbtarget.ErrRetry && tr.retries < int64(cfg.MaxRetries) {
		wait := cfg.Backoff.wait(tr.retries)
		if wait > 0 {
			tm := time.NewTimer(wait)
			select {
			case <-tm.C:
			case <-ctx.Done():
				tm.Stop()
				return tr, err
			}
			tr.backoff += wait
		}
		tr.retries++
		if Phase(phase.Load()) == PhaseMeasure {
			tr.windowed++
		}
		clear(t)
		tr.retrying = time.Since(first)
		err = v.Run(ctx, tx, t)
	}
	return tr, err
}

// outcomeOf is how a transaction that returned err ended.
func outcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Committed
	case errors.Is(err, ErrRollback):
		return RolledBack
	case errors.Is(err, ErrInDoubt):
		return InDoubt
	}
	return Failed
}

// recordSecond adds a completed transaction's latency to the VU's
// histogram of the second it ended in, handing the previous second's over
// first.
func recordSecond(s *vuState, sh *shared, ended time.Time, took time.Duration) {
	s.second.record(&sh.seconds, sh.started, ended, took)
}

// reconnecter is a VU or a Session: what has a connection to replace.
type reconnecter interface {
	Reconnect(ctx context.Context) error
}

// reconnectWait bounds one attempt to reconnect: a server that takes
// connections but answers nothing (stopped, or behind a half-open proxy)
// would otherwise hold a virtual user in its start-up for ever, and the
// run would never learn that the server was out of reach.
const reconnectWait = 10 * time.Second

// reconnect retries with backoff until it works or the run stops. A
// first failure makes the server unreachable since lost, the moment the
// connection was lost. While an Outage action is watched the backoff does
// not grow: the outage measured is the system's, to within the first
// backoff, not the backoff's own doubling.
func reconnect(ctx context.Context, v reconnecter, sh *shared, lost time.Time) bool {
	const first = 100 * time.Millisecond
	backoff, hurry := first, sh.hurry
	for tries := 0; ; tries++ {
		attempt, cancel := context.WithTimeout(ctx, min(reconnectWait, sh.cfg.LostAfter))
		err := v.Reconnect(attempt)
		cancel()
		if err == nil {
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
		if hurry != nil && sh.outages.open.Load() == nil {
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

// sessionAllowance is what a holder takes beyond its histograms: its
// goroutine's stack, its session's connection buffers and statements. An
// allowance: a tproc-c VU on PostgreSQL grew dbrig by about 200 KB, its
// histograms, as far as they were written, included.
const sessionAllowance = 256 << 10

// TerminalBytes is about what a pooled run's terminal takes: its place in
// the pool, its timer and the workload's terminal (a tproc-c terminal's
// streams and decks). An allowance: 2,000 tproc-c terminals took about
// 4.5 KB each.
const TerminalBytes = 16 << 10

// HolderBytes is about what a holder (a virtual user, or a pooled run's
// session) of a run of types transaction types takes: a histogram of the
// window a type and one of the second in hand, which the driver allocates
// for it before the run starts, and its session.
func HolderBytes(types int) int64 {
	return int64(types)*int64(latency.NewHistogram().ByteSize()) + int64(latency.NewSecondHistogram().ByteSize()) + sessionAllowance
}
