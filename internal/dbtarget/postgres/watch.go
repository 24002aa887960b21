package postgres

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// watch interrupts a session's calls when the context they were given
// ends, in place of pgx's own watch. pgx watches a context on every call
// it is given one that can end: it registers a function with the context
// and removes it again when the call returns, each time under the
// context's lock, which all virtual users share when they share the
// run's context. A session is given the same context call after call, so
// the session watches it once instead, until it is given another, and
// calls pgx with context.Background(), which pgx does not watch. As with
// pgx's own watch, the context's end sets the connection's deadline in
// the past, which fails the call in hand (and closes its connection), and
// the call then says the context's error.
type watch struct {
	// ctx is the watched context, done its Done; nil while none is
	// watched.
	ctx  context.Context
	done <-chan struct{}
	// ended says the watched context has ended; the connection's
	// deadline is then in the past.
	ended atomic.Bool
	// mu orders the context's end after the watch that registered it,
	// or not at all once the watch has moved to another context.
	mu   sync.Mutex
	stop func() bool
	conn net.Conn
}

// context is what to call pgx with for a call made with ctx: itself when
// it cannot end (the watch of an earlier one stopped, and the deadline
// its end set lifted, so that a cleanup after Ctrl-C can run), else
// context.Background(), ctx being watched. An ended ctx is its error.
func (w *watch) context(ctx context.Context) (context.Context, error) {
	done := ctx.Done()
	if done == nil {
		w.unwatched()
		return ctx, nil
	}
	if done != w.done {
		if err := ctx.Err(); err != nil {
			return nil, err // ended before it was watched
		}
		w.rewatch(ctx, done)
	}
	if w.ended.Load() {
		return nil, ctx.Err()
	}
	return context.Background(), nil
}

// rewatch watches ctx, whose Done is done, instead of the one watched so
// far. A deadline the old one's end set is lifted: the connection is
// likely closed by then, but a call that was not in flight did not close
// it.
func (w *watch) rewatch(ctx context.Context, done <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancel()
	w.ctx, w.done = ctx, done
	w.stop = context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.done == done {
			w.ended.Store(true)
			w.conn.SetDeadline(time.Unix(1, 0))
		}
	})
}

// cancel stops watching; w.mu is held.
func (w *watch) cancel() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	w.ctx, w.done = nil, nil
	if w.ended.Swap(false) {
		w.conn.SetDeadline(time.Time{})
	}
}

// unwatched readies the connection for a call the watch does not cover:
// one pgx watches itself, or one whose context cannot end. The watch
// stops, and a deadline its context's end set is lifted: a context
// commonly ends after its last call returned (a timeout's cancel,
// deferred), and the connection must not carry that end into the next
// call.
func (w *watch) unwatched() {
	if w.done != nil {
		w.close()
	}
}

// close stops watching, as the session closes.
func (w *watch) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancel()
}

// why is err, from a call pgx made unwatched, as pgx would have said it
// had it watched the context: the context's error where its end timed the
// call out.
func (w *watch) why(err error) error {
	if err != nil && w.ended.Load() && pgconn.Timeout(err) {
		return w.ctx.Err()
	}
	return err
}
