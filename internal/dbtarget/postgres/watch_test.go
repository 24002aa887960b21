//go:build unix

package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// TestWatchEndsCallInFlight: a context's end interrupts a call made with
// it (the session watches it, pgx does not) within a second, and the call
// says the context's error, as pgx's own watch would: cancelled, or past
// its deadline. Each call's context is another one, so the session moves
// its watch along. The context ends only after a first call on it has
// put the watch in place: a deadline of 200 ms from the context's making
// once passed during that call on a loaded CI machine.
func TestWatchEndsCallInFlight(t *testing.T) {
	ctx, tg, _ := newSession(t)
	for _, c := range []struct {
		name string
		make func() (context.Context, context.CancelFunc)
		// arm makes the context end, once the first call on it is done,
		// and says when it ends.
		arm  func(context.Context, context.CancelFunc) time.Time
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) },
			func(_ context.Context, cancel context.CancelFunc) time.Time {
				time.AfterFunc(200*time.Millisecond, cancel)
				return time.Now().Add(200 * time.Millisecond)
			}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 3*time.Second) },
			func(c context.Context, _ context.CancelFunc) time.Time {
				d, _ := c.Deadline()
				return d
			}, context.DeadlineExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := tg.Session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			call, cancel := c.make()
			defer cancel()
			// A first call on the context, so the watch is in place.
			if _, err := s.Exec(call, "SELECT pg_sleep($1)", 0.0); err != nil {
				t.Fatal(err)
			}
			end := c.arm(call, cancel)
			var n int
			err = s.QueryRow(call, "SELECT 1 FROM pg_sleep($1)", 10.0).Scan(&n)
			if late := time.Since(end); late > time.Second {
				t.Errorf("the call ended %s after its context did; want within a second", late)
			}
			if !errors.Is(err, c.want) || tg.Classify(err) != dbtarget.ErrOther {
				t.Errorf("error %v (class %v); want %v, class other", err, tg.Classify(err), c.want)
			}
			if _, err := s.Exec(call, "SELECT $1::int", 1); !errors.Is(err, c.want) {
				t.Errorf("a call after the end: %v; want %v", err, c.want)
			}
		})
	}
}

// TestWatchEndedBetweenCalls: a context that ends while no call is in
// flight fails the next call made with it, at once, and leaves the
// connection as it was for a call with another context.
func TestWatchEndedBetweenCalls(t *testing.T) {
	ctx, _, s := newSession(t)
	call, cancel := context.WithCancel(ctx)
	if _, err := s.Exec(call, "SELECT $1::int", 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(50 * time.Millisecond) // the watch's function runs on its own
	// A call pgx watches itself, on a context that lives, as the edges'
	// flush: the ended context's deadline must not fail it.
	if err := s.(dbtarget.Flusher).Flush(ctx); err != nil {
		t.Fatalf("a flush after another context ended: %v", err)
	}
	if _, err := s.Exec(call, "SELECT $1::int", 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("a call with the ended context: %v; want %v", err, context.Canceled)
	}
	// A cleanup after Ctrl-C runs on a context that cannot end: the
	// deadline the ended one set must not fail it.
	if _, err := s.Exec(context.Background(), "SELECT $1::int", 4); err != nil {
		t.Fatalf("a call with a context that cannot end, after one ended: %v", err)
	}
	var n int
	if err := s.QueryRow(ctx, "SELECT $1::int", 3).Scan(&n); err != nil || n != 3 {
		t.Fatalf("a call with another context: %d, %v; want 3", n, err)
	}
	rows, err := s.Query(ctx, "SELECT generate_series(1, $1::int)", 3)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		n++
	}
	if rows.Close(); rows.Err() != nil || n != 6 {
		t.Fatalf("a query with another context read %d rows, %v; want 3", n-3, rows.Err())
	}
}
