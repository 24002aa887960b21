package workload

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// Task is one piece of work on a session of its own.
type Task func(ctx context.Context, s dbtarget.Session) error

// Exec is the task of running one statement.
func Exec(stmt string) Task {
	return func(ctx context.Context, s dbtarget.Session) error {
		_, err := s.Exec(ctx, stmt)
		return err
	}
}

// Parallel runs tasks in order over n sessions of t; the first error
// cancels the rest.
func Parallel(ctx context.Context, t dbtarget.Target, n int, tasks []Task) error {
	return Spread(ctx, min(n, len(tasks)), tasks, func(ctx context.Context, _ int, next <-chan Task) error {
		s, err := t.Session(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		for task := range next {
			if err := task(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// Spread hands items, in order, to n workers on an errgroup, each taking
// the next item from its channel when it is free. The first error cancels
// the rest, and a cancelled ctx is an error even between items.
func Spread[T any](ctx context.Context, n int, items []T, worker func(ctx context.Context, i int, next <-chan T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	next := make(chan T)
	for i := range n {
		g.Go(func() error { return worker(gctx, i, next) })
	}
feed:
	for _, item := range items {
		select {
		case next <- item:
		case <-gctx.Done():
			break feed
		}
	}
	close(next)
	err := g.Wait()
	// Once ctx is cancelled, the work fails however its driver reports it
	// (pgx: a closed connection); the cancellation is the reason.
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// LoadJob is one independent piece of a load, runnable on any loader.
type LoadJob struct {
	Table   string
	Columns []string
	Rows    int64 // rows it yields (an expected count where it varies), for progress
	Source  func() dbtarget.RowSource
}

// Load bulk-loads jobs over n loaders (one where the target cannot write
// in parallel, since more would only contend), calling progress with
// what about once a second. It returns the rows loaded.
func Load(ctx context.Context, t dbtarget.Target, n int, jobs []LoadJob, what string, progress func(done, total int64, what string)) (int64, error) {
	return LoadThen(ctx, t, n, jobs, nil, what, progress)
}

// ticker calls f every second until the returned stop is called.
func ticker(f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// counted counts the rows a source yields, in batches to keep the shared
// counter off the per-row path.
type counted struct {
	dbtarget.RowSource
	n     *atomic.Int64
	local int64
}

func (c *counted) Next() bool {
	if c.RowSource.Next() {
		c.local++
		if c.local == 1024 {
			c.n.Add(c.local)
			c.local = 0
		}
		return true
	}
	c.n.Add(c.local)
	c.local = 0
	return false
}

// RowFunc adapts a row function to dbtarget.RowSource: next fills the
// values of the following row, of columns values, and reports whether
// there was one.
func RowFunc(columns int, next func([]any) bool) dbtarget.RowSource {
	return &funcSource{vals: make([]any, columns), next: next}
}

type funcSource struct {
	vals []any
	next func([]any) bool
}

func (s *funcSource) Next() bool             { return s.next(s.vals) }
func (s *funcSource) Values() ([]any, error) { return s.vals, nil }
func (s *funcSource) Err() error             { return nil }
