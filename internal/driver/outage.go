package driver

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ActionOutage is what an action that asked for it (Action.Outage) cost
// the application: the stretches in which no transaction completed around
// it, overall and for each holder (a virtual user, or a pooled run's
// session), as a client of a failover sees it.
type ActionOutage struct {
	// Action is the action's span, from its start to its return; What is
	// the first thing it noted (the event that begins it).
	Action Span
	What   string
	// Longest is the longest stretch in which no transaction completed
	// that overlaps the action's span; ToEnd says none completed after
	// it, so that it runs to the window's end (where a holder never came
	// back, from the last completion of any).
	Longest Span
	ToEnd   bool
	// Holders are each holder's own longest such stretch, from its last
	// completion before to its first after, by holder (Result's order of
	// VUs or sessions); Sessions says they are a pooled run's sessions.
	Holders  []HolderOutage
	Sessions bool
}

// HolderOutage is one holder's longest stretch without a completion
// around an action. NotBack says it never completed again: the stretch
// runs to the window's end.
type HolderOutage struct {
	Span
	NotBack bool
}

// outages are the watches of the Outage actions: those open, which the
// holders see with one atomic load per completion (nil with none open),
// and all of them, for the result.
type outages struct {
	open atomic.Pointer[[]*watch]
	mu   sync.Mutex
	all  []*watch
}

// watch follows one Outage action from its start until every holder has
// completed a transaction after its return: each holder's gaps between
// completions (its own slot, which it alone writes), and the gaps between
// any holders' completions.
type watch struct {
	o       *outages
	from    int64        // the action's start, UnixNano
	to      atomic.Int64 // its return; 0 while it runs
	what    string
	holders []holderWatch
	pending atomic.Int32 // holders not yet back after the return
	first   atomic.Int64 // the first completion, of any holder, after from
	last    atomic.Int64 // the latest completion after from
	// gap is the longest stretch between two completions after from that
	// began before to, and gAt where it began (under mu).
	gap atomic.Int64
	mu  sync.Mutex
	gAt int64
}

// holderWatch is one holder's part of a watch, written by that holder
// alone, and read once every holder has stopped.
type holderWatch struct {
	joined, back bool
	// before is its last completion up to from, 0 for none; prev its
	// latest since, or its start where it has none.
	before, prev int64
	gap, gAt     int64
}

// start opens a watch of an action that starts now, for holders.
func (o *outages) start(holders int) *watch {
	w := &watch{o: o, from: time.Now().UnixNano(), holders: make([]holderWatch, holders)}
	w.pending.Store(int32(holders))
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all = append(o.all, w)
	o.publish(append(o.openNow(), w))
	return w
}

// openNow is the watches open, under mu.
func (o *outages) openNow() []*watch {
	if p := o.open.Load(); p != nil {
		return slices.Clone(*p)
	}
	return nil
}

// publish makes open the watches the holders see, under mu.
func (o *outages) publish(open []*watch) {
	if len(open) == 0 {
		o.open.Store(nil)
		return
	}
	o.open.Store(&open)
}

// close stops showing w to the holders: every one is back.
func (o *outages) close(w *watch) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.publish(slices.DeleteFunc(o.openNow(), func(x *watch) bool { return x == w }))
}

// completed is holder s's, as a transaction of its completes at t
// (UnixNano): it costs an atomic load while no watch is open.
func (o *outages) completed(s *vuState, t int64) {
	if open := o.open.Load(); open != nil {
		for _, w := range *open {
			w.completed(s, t)
		}
	}
	s.lastOK = t
}

// join starts the holder's part of the watch from its last completion,
// or from its start where it has none yet.
func (h *holderWatch) join(s *vuState) {
	if h.joined {
		return
	}
	h.joined = true
	h.before, h.prev = s.lastOK, s.lastOK
	if h.prev == 0 {
		h.prev = s.start
	}
}

// returned marks the action's return.
func (w *watch) returned() {
	w.to.Store(time.Now().UnixNano())
}

// completed records holder s's completion at t.
func (w *watch) completed(s *vuState, t int64) {
	h := &w.holders[s.id]
	if h.back {
		return
	}
	h.join(s)
	if t <= w.from {
		h.before, h.prev = t, t
		return
	}
	to := w.to.Load()
	if (to == 0 || h.prev < to) && t-h.prev > h.gap {
		h.gap, h.gAt = t-h.prev, h.prev
	}
	h.prev = t
	w.overall(t, to)
	if to != 0 && t >= to {
		h.back = true
		if w.pending.Add(-1) == 0 {
			w.o.close(w)
		}
	}
}

// overall follows the completions of all holders after from: each gap
// between two, where it began before the action returned, may be the
// longest. The gap before the first is the result's to find, from every
// holder's last completion before from.
func (w *watch) overall(t, to int64) {
	for {
		prev := w.last.Load()
		if t <= prev {
			return
		}
		if !w.last.CompareAndSwap(prev, t) {
			continue
		}
		if prev == 0 {
			w.first.CompareAndSwap(0, t)
			return
		}
		if (to == 0 || prev < to) && t-prev > w.gap.Load() {
			w.mu.Lock()
			if t-prev > w.gap.Load() {
				w.gap.Store(t - prev)
				w.gAt = prev
			}
			w.mu.Unlock()
		}
		return
	}
}

// result is every watch's figures, once every holder has stopped: a
// holder not back counts to end, the window's end.
func (o *outages) result(states []*vuState, started time.Time, end int64, sessions bool) []ActionOutage {
	var out []ActionOutage
	at := func(ns int64) float64 { return time.Unix(0, ns).Sub(started).Round(time.Millisecond).Seconds() }
	span := func(from, to int64) Span {
		return Span{At: at(from), Seconds: time.Duration(to - from).Round(time.Millisecond).Seconds()}
	}
	for _, w := range o.all {
		a := ActionOutage{Action: span(w.from, max(w.to.Load(), w.from)), What: w.what, Sessions: sessions}
		// The stretch before the first completion after from began at the
		// last completion, of any holder, before it.
		var before int64
		for i, h := range w.holders {
			h.join(states[i])
			before = max(before, h.before)
			if !h.back && end-h.prev >= h.gap {
				h.gap, h.gAt = end-h.prev, h.prev
			}
			a.Holders = append(a.Holders, HolderOutage{Span: span(h.gAt, h.gAt+h.gap), NotBack: !h.back})
		}
		if before == 0 {
			before = w.from
		}
		first, gap, last := w.first.Load(), w.gap.Load(), w.last.Load()
		switch {
		case first == 0:
			a.Longest, a.ToEnd = span(before, max(end, before)), true
		// A holder not back leaves the stretch from the last completion to
		// the window's end open: a server that did not come back in time
		// after a completion or two that beat the kill.
		case w.pending.Load() > 0 && end-last > max(first-before, gap):
			a.Longest, a.ToEnd = span(last, end), true
		case first-before >= gap:
			a.Longest = span(before, first)
		default:
			a.Longest = span(w.gAt, w.gAt+gap)
		}
		out = append(out, a)
	}
	return out
}
