package driver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbrig/dbrig/internal/latency"
)

// Span is a stretch of a run, in seconds since it started. Answered, of
// a stall, says the server answered the run's probe meanwhile.
type Span struct {
	At       float64
	Seconds  float64
	Answered bool
}

// health follows the server as the virtual users see it: the stretches in
// which it could not be reached (outages) and those in which it answered
// nothing while virtual users waited on it (stalls). The virtual users
// touch it with a few atomics on their path; the ticker reads it once a
// second and decides.
type health struct {
	started               time.Time
	lostAfter, stallAfter time.Duration
	// down is when the server was lost (UnixNano): the error of a virtual
	// user whose first attempt to reconnect then failed. 0 while it is up.
	down atomic.Int64
	// stalled is when the open stall began (UnixNano), 0 with none open;
	// resumed is when the first transaction after it ended.
	stalled, resumed atomic.Int64
	// probe, where the run has one, asks the server something of its own
	// during a stall: heard is when it last answered (UnixNano), asked
	// when the first probe not answered since was sent (0: none), and
	// probing says one is in flight.
	probe        func(context.Context) error
	heard, asked atomic.Int64
	probing      atomic.Bool
	// probes ends the probes in flight as the run ends: one that holds a
	// target's own connection would hold up closing it.
	probes context.Context

	// gone closes as the run gives the server up.
	gone chan struct{}

	mu      sync.Mutex
	outages []Span
	stalls  []Span
	lost    bool
	// silent says the server was lost because it stopped answering, not
	// because it refused connections.
	silent bool
}

func newHealth(probes context.Context, started time.Time, lostAfter, stallAfter time.Duration, probe func(context.Context) error) *health {
	return &health{started: started, lostAfter: lostAfter, stallAfter: stallAfter, probe: probe, probes: probes, gone: make(chan struct{})}
}

func (h *health) span(from, to int64) Span {
	return Span{
		At:      time.Unix(0, from).Sub(h.started).Round(time.Millisecond).Seconds(),
		Seconds: time.Duration(to - from).Round(time.Millisecond).Seconds(),
	}
}

// unreachable is a virtual user's: it lost its connection at at and could
// not open another. The first such report starts the outage.
func (h *health) unreachable(at time.Time) { h.down.CompareAndSwap(0, at.UnixNano()) }

// reached is a virtual user's: it has a connection again, which ends the
// outage, unless the run already gave the server up.
func (h *health) reached(now time.Time) {
	since := h.down.Swap(0)
	if since == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.lost {
		h.outages = append(h.outages, h.span(since, now.UnixNano()))
	}
}

// ended is a virtual user's, as each of its transactions ends: the first
// end after a stall began closes it.
func (h *health) ended(now int64) {
	if h.stalled.Load() != 0 {
		h.resumed.CompareAndSwap(0, now)
	}
}

// check is the ticker's, once a second: it opens and closes stalls, and
// reports whether the server has now been out of reach, or silent, for
// lostAfter, which gives it up and ends the run. A stall in which neither
// a transaction nor the probe has answered for lostAfter is a server that
// no longer answers (frozen, or behind a connection that a proxy or the
// network left half-open): it is lost as surely as one that refuses
// connections. One whose probe answers is a server whose transactions wait
// on something inside it (locks, a statement that does not end): a stall,
// not a loss. A run of a fixed amount of work, whose transactions may be
// long, records no stalls, but is watched for silence all the same, from
// lostAfter without an end.
func (h *health) check(now time.Time, states []*vuState) bool {
	if since := h.down.Load(); since != 0 && now.Sub(time.Unix(0, since)) >= h.lostAfter {
		return h.giveUp(now)
	}
	after := h.stallAfter
	if after <= 0 {
		after = h.lostAfter
	}
	last, waiting := lastEnd(states)
	if began := h.stalled.Load(); began != 0 {
		end := h.resumed.Load()
		if end == 0 && last > began {
			// A transaction ended as the stall was being opened.
			end = last
		}
		if end == 0 {
			if h.unanswered(now, began) {
				return h.giveUpSilent(h.silentSince(now).UnixNano(), now)
			}
			h.ask()
			return false
		}
		h.mu.Lock()
		h.closeStall(began, end)
		h.mu.Unlock()
		h.resumed.Store(0)
		h.stalled.Store(0)
		return false
	}
	// Nothing ended since last, and a virtual user has waited in its
	// transaction since it began it: one that has just begun one after a
	// long think has not waited since the last end, and is no stall.
	if since := max(last, waiting); waiting > 0 && last > 0 && now.Sub(time.Unix(0, since)) >= after {
		h.stalled.Store(since)
		h.ask()
	}
	return false
}

// unanswered says the server has answered nothing for lostAfter, neither
// a transaction since the stall that began at began nor a probe, and that
// a probe has waited long enough to tell (probeWait).
func (h *health) unanswered(now time.Time, began int64) bool {
	if now.Sub(time.Unix(0, max(began, h.heard.Load()))) < h.lostAfter {
		return false
	}
	if h.probe == nil {
		return true
	}
	asked := h.asked.Load()
	return asked != 0 && now.Sub(time.Unix(0, asked)) >= min(h.lostAfter/4, probeWait)
}

// probeWait is how long a probe of the server may go unanswered before the
// server counts as silent, in a stall that has lasted lostAfter: a server
// at work answers one in milliseconds.
const probeWait = 5 * time.Second

// ask sends the probe, unless one is in flight: a stall asks about once a
// second, each probe bounded by lostAfter.
func (h *health) ask() {
	if h.probe == nil || !h.probing.CompareAndSwap(false, true) {
		return
	}
	h.asked.CompareAndSwap(0, time.Now().UnixNano())
	go func() {
		defer h.probing.Store(false)
		ctx, cancel := context.WithTimeout(h.probes, h.lostAfter)
		defer cancel()
		if h.probe(ctx) == nil {
			h.heard.Store(time.Now().UnixNano())
			h.asked.Store(0)
		}
	}()
}

// await waits, as the window closes, for a server out of reach to come
// back, up to lostAfter since it went, and gives it up if it does not;
// it reports whether there is a server. Quit ends the wait, the server
// not given up.
func (h *health) await(quit <-chan struct{}) bool {
	for {
		since := h.down.Load()
		if since == 0 {
			return !h.gaveUp()
		}
		if h.gaveUp() || time.Since(time.Unix(0, since)) >= h.lostAfter {
			h.giveUp(time.Now())
			return false
		}
		select {
		case <-quit:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// silentSince is when the server was last heard from, as far as the
// run can tell: the start of the stall open now, or the probe's last
// answer during it; else now.
func (h *health) silentSince(now time.Time) time.Time {
	if began := h.stalled.Load(); began != 0 && h.resumed.Load() == 0 {
		return time.Unix(0, max(began, h.heard.Load()))
	}
	return now
}

// bounded is ctx with the deadline by which a read of the server must
// answer: lostAfter after it was last heard from.
func (h *health) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, h.silentSince(time.Now()).Add(h.lostAfter))
}

func (h *health) gaveUp() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// giveUp records the open outage up to now as the server's loss; it
// reports whether there was one.
func (h *health) giveUp(now time.Time) bool {
	since := h.down.Load()
	if since == 0 {
		return false
	}
	h.lose(since, now, false)
	return true
}

// giveUpSilent records the server's loss, silent since since (UnixNano):
// the stall open since then, or an edge's read that was not answered,
// becomes the outage that ended the run.
func (h *health) giveUpSilent(since int64, now time.Time) bool {
	h.lose(since, now, true)
	h.stalled.Store(0)
	return true
}

func (h *health) lose(since int64, now time.Time, silent bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.lost {
		h.lost, h.silent = true, silent
		h.outages = append(h.outages, h.span(since, now.UnixNano()))
		close(h.gone)
	}
}

// finish closes a stall still open as the run ends, at now.
func (h *health) finish(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if began := h.stalled.Load(); began != 0 {
		end := h.resumed.Load()
		if end == 0 {
			end = now.UnixNano()
		}
		h.closeStall(began, end)
	}
}

// closeStall records the stall from began to end (UnixNano), in a run that
// records stalls; called under mu.
func (h *health) closeStall(began, end int64) {
	if h.stallAfter <= 0 {
		return
	}
	st := h.span(began, end)
	st.Answered = h.heard.Load() > began
	h.stalls = append(h.stalls, st)
}

// lastEnd is when the last transaction of any virtual user ended (each
// starts with its own start), and since when the one that has waited
// longest in a transaction it is in now began it (0: none is in one).
func lastEnd(states []*vuState) (last, waiting int64) {
	for _, s := range states {
		b, e := s.began.Load(), s.ended.Load()
		last = max(last, e)
		if b > e && (waiting == 0 || b < waiting) {
			waiting = b
		}
	}
	return last, waiting
}

// seconds gathers the virtual users' latencies second by second. Each
// records into a histogram of its own and hands it over once its second
// is over, so the lock is taken once per virtual user and second, never
// per transaction. A second more than packAfter behind the latest handed
// over is packed (HdrHistogram's compressed encoding, about a KB instead
// of 26), and unpacked again for a late hand-over or a read: a run keeps
// no more than a few whole histograms, however long it is.
type seconds struct {
	mu     sync.Mutex
	h      []*hdrhistogram.Histogram // by whole seconds since the run started
	packed []string                  // the seconds whose histogram is packed
	latest int
	free   *hdrhistogram.Histogram // a packed second's histogram, reset
}

const packAfter = 5

func (s *seconds) add(i int, h *hdrhistogram.Histogram) {
	if i < 0 || h.TotalCount() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.h) <= i {
		s.h, s.packed = append(s.h, nil), append(s.packed, "")
	}
	if s.h[i] == nil {
		s.h[i] = s.unpack(i)
		s.packed[i] = ""
	}
	s.h[i].Merge(h)
	switch {
	case i > s.latest:
		s.latest = i
		s.pack(i - packAfter)
	case i <= s.latest-packAfter:
		s.pack(i) // a late hand-over: packed again at once
	}
}

// unpack is second i's histogram: its packed one decoded, or a new one.
func (s *seconds) unpack(i int) *hdrhistogram.Histogram {
	if s.packed[i] != "" {
		if h, err := latency.Decode(s.packed[i]); err == nil {
			return h
		}
	}
	if h := s.free; h != nil {
		s.free = nil
		return h
	}
	return latency.NewSecondHistogram()
}

// pack encodes second i's histogram and keeps it for the next new second.
func (s *seconds) pack(i int) {
	if i < 0 || s.h[i] == nil {
		return
	}
	enc, err := latency.Encode(s.h[i])
	if err != nil {
		return
	}
	s.packed[i] = enc
	s.h[i].Reset()
	s.free, s.h[i] = s.h[i], nil
}

// hist is second i's histogram, for reading; nil if none was handed over.
func (s *seconds) hist(i int) *hdrhistogram.Histogram {
	if i < 0 || i >= len(s.h) {
		return nil
	}
	if s.h[i] == nil && s.packed[i] != "" {
		h, _ := latency.Decode(s.packed[i])
		return h
	}
	return s.h[i]
}

// attach gives each point of the series the percentiles of the second it
// ends: the point at T covers the second before it. With keep (a part of
// a run, whose document carries them for the parts' merge) it gives it
// the second's histogram too, unpacked: a whole run keeps none.
func (s *seconds) attach(series []Point, keep bool) {
	for k := range series {
		h := s.ending(series[k].T)
		series[k].Latency = percentiles(h)
		if keep {
			series[k].Hist = h
		}
	}
}

// ending is the histogram of the second a point at t ends; nil if
// nothing was recorded in it.
func (s *seconds) ending(t float64) *hdrhistogram.Histogram {
	return s.hist(int(t+0.5) - 1)
}

// percentiles is h's, nil for none.
func percentiles(h *hdrhistogram.Histogram) *latency.Percentiles {
	if h == nil {
		return nil
	}
	return latency.PercentilesOf(h)
}
