package driver

import (
	"context"
	"sync/atomic"
	"time"
)

// edge is one edge of the measured window as the VUs meet it: each
// finishes the transaction in hand, publishes what it has done (Flusher)
// and waits while the edge is read, so that the database's counters read
// there and the client's phase agree on which side of the edge every
// transaction fell.
type edge struct {
	// asked closes when the driver asks the VUs to stop at the edge.
	asked chan struct{}
	// away counts the VUs yet to stop there, or leave; all closes as the
	// last one does.
	away atomic.Int32
	all  chan struct{}
	// read closes once the edge has been read, and the VUs go on.
	read chan struct{}
	// askedAt and readAt are when asked and read closed, each written
	// before its channel closes: a pooled run takes the hold out of the
	// waits of terminals that queued through it.
	askedAt, readAt int64 // UnixNano
}

func newEdge(vus int) *edge {
	e := &edge{asked: make(chan struct{}), read: make(chan struct{}), all: make(chan struct{})}
	e.away.Store(int32(vus))
	if vus == 0 {
		close(e.all)
	}
	return e
}

// arrive is a VU's, as it stops at the edge or leaves before it.
func (e *edge) arrive() {
	if e.away.Add(-1) == 0 {
		close(e.all)
	}
}

// hold asks every VU to stop at the edge and waits until all have, until
// wait has passed, or until gone or quit closes: a VU stuck in a
// transaction (a silent server) does not hold the edge longer, and VUs
// still trying to reach a server given up never come. It returns how many
// VUs had not come.
func (e *edge) hold(wait time.Duration, gone, quit <-chan struct{}) int {
	e.askedAt = time.Now().UnixNano()
	close(e.asked)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-e.all:
	case <-t.C:
	case <-gone:
	case <-quit:
	}
	return int(max(e.away.Load(), 0))
}

// release lets the VUs go on, the edge read.
func (e *edge) release() {
	e.readAt = time.Now().UnixNano()
	close(e.read)
}

// held is how much of [from, to] (UnixNano) the edge held the VUs for,
// from its ask to its read; read only by a VU that went on past it.
func (e *edge) held(from, to int64) time.Duration {
	return time.Duration(max(min(to, e.readAt)-max(from, e.askedAt), 0))
}

// vuEdges is one VU's way through the window's edges.
type vuEdges struct {
	all  []*edge
	next int // the first edge the VU has yet to reach
	// f is what the VU flushes at each edge: its VU, or a pooled run's
	// session; a Flusher or not.
	f any
}

// asked closes when the next edge is asked for; it is nil, which never
// closes, after the last one.
func (e *vuEdges) asked() <-chan struct{} {
	if e.next == len(e.all) {
		return nil
	}
	return e.all[e.next].asked
}

// reach stops the VU at the next edge until it has been read. It reports
// whether the VU goes on: not after the last edge, nor once stop closes.
// A flush that fails (a lost session) leaves the counters as they are.
func (e *vuEdges) reach(ctx context.Context, stop <-chan struct{}) bool {
	ed := e.all[e.next]
	e.next++
	flush(ctx, e.f)
	ed.arrive()
	if e.next == len(e.all) {
		return false
	}
	select {
	case <-ed.read:
		return true
	case <-stop:
		return false
	}
}

// sleep waits d, stopping at any edge asked for meanwhile (at once when
// d is zero); it reports whether the VU goes on. A zero d reads no
// clock: procs mode calls it twice per transaction with no pacing.
func (e *vuEdges) sleep(ctx context.Context, d time.Duration, stop <-chan struct{}) bool {
	var end time.Time
	if d > 0 {
		end = time.Now().Add(d)
	}
	for {
		// Two receives that do not wait, not one select of both: each is
		// the runtime's fast path, where a select of two cases and a
		// default took ~1% of a procs run's client CPU, called twice per
		// transaction. A stop asked for with an edge wins.
		select {
		case <-stop:
			return false
		default:
		}
		select {
		case <-e.asked():
			if !e.reach(ctx, stop) {
				return false
			}
			continue
		default:
		}
		if d <= 0 {
			return true
		}
		left := time.Until(end)
		if left <= 0 {
			return true
		}
		t := time.NewTimer(left)
		select {
		case <-stop:
			t.Stop()
			return false
		case <-e.asked():
			t.Stop()
			if !e.reach(ctx, stop) {
				return false
			}
		case <-t.C:
			return true
		}
	}
}

// leave, as the VU stops, publishes what it has done and arrives at
// every edge it has not reached, so that none waits for it.
func (e *vuEdges) leave(ctx context.Context) {
	if e.next == len(e.all) {
		return
	}
	flush(ctx, e.f)
	for ; e.next < len(e.all); e.next++ {
		e.all[e.next].arrive()
	}
}

// flush publishes what v (a VU or a Session) has done, if it is a Flusher.
func flush(ctx context.Context, v any) error {
	if f, ok := v.(Flusher); ok {
		return f.Flush(ctx)
	}
	return nil
}
