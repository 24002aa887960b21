package tprocc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbrig/dbrig/internal/target"
	"github.com/dbrig/dbrig/internal/workload"
	"golang.org/x/sync/errgroup"
)

// genConfig fixes everything generation depends on: the same config gives
// the same rows, whichever loader makes them and in whatever order.
type genConfig struct {
	Seed  uint64
	CLoad int       // NURand C for C_LAST at load time (clause 2.1.6)
	Now   time.Time // the population date/time (c_since, o_entry_d, ...)
}

// loadJob is one independent piece of the load, runnable on any loader.
type loadJob struct {
	Table   string
	Columns []string
	Rows    int64 // rows it yields (order_line: the expected count), for progress
	Source  func() target.RowSource
}

// Build creates the schema, loads it with parallel loaders, adds keys,
// routines and statistics, and records what it built. A build that fails
// part-way drops what it made, so no half-built schema is left behind.
func (w *tprocc) Build(ctx context.Context, t target.Target, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	if w.warehouses < 1 {
		return sum, target.Userf("--warehouses must be at least 1, got %d", w.warehouses)
	}
	if w.loaders < 1 {
		return sum, target.Userf("--loaders must be at least 1, got %d", w.loaders)
	}
	began := time.Now()
	q, err := sqlFor(t, "schema.sql")
	if err != nil {
		return sum, err
	}
	s, err := t.Session(ctx)
	if err != nil {
		return sum, err
	}
	defer s.Close()
	m, err := readMeta(ctx, t, s, q)
	switch {
	case errors.Is(err, workload.ErrNoSchema):
	case !opt.Force && err == nil:
		return sum, target.Userf("a %s schema with %d warehouses already exists on %s: use --force to drop and rebuild it, or `dbrig drop %s --target %s`", Name, m.warehouses, t.URL(), Name, t.URL())
	case !opt.Force:
		return sum, err
	default:
		if err := w.Drop(ctx, t); err != nil {
			return sum, err
		}
	}
	if sum, err = w.build(ctx, t, s, q, opt); err != nil {
		// The context may be what failed; the clean-up must still run.
		if derr := w.Drop(context.WithoutCancel(ctx), t); derr != nil {
			err = fmt.Errorf("%w (and dropping the partial schema failed too: %v)", err, derr)
		}
		return sum, err
	}
	sum.Seconds = time.Since(began).Seconds()
	return sum, nil
}

func (w *tprocc) build(ctx context.Context, t target.Target, s target.Session, q workload.SQLFile, opt workload.BuildOptions) (workload.BuildSummary, error) {
	var sum workload.BuildSummary
	progress := opt.Progress
	if progress == nil {
		progress = func(int64, int64, string) {}
	}
	for _, stmt := range q.Statements("tables") {
		if _, err := s.Exec(ctx, stmt); err != nil {
			return sum, fmt.Errorf("create tables: %w", err)
		}
	}
	g := genConfig{Seed: w.seed, CLoad: loadConstant(w.seed), Now: time.Now().UTC().Truncate(time.Microsecond)}
	jobs := loadJobs(g, w.warehouses)
	loaders := w.loaders
	if !t.ParallelWrites() {
		loaders = 1
	}
	var total int64
	for _, j := range jobs {
		total += j.Rows
	}
	var done atomic.Int64
	progress(0, total, "loading")
	stopTicks := ticker(func() { progress(done.Load(), total, "loading") })
	tasks := make([]func(context.Context, target.Session) error, len(jobs))
	for i, j := range jobs {
		tasks[i] = func(ctx context.Context, s target.Session) error {
			n, err := s.Load(ctx, j.Table, j.Columns, &counted{RowSource: j.Source(), n: &done})
			atomic.AddInt64(&sum.Rows, n)
			return err
		}
	}
	err := parallel(ctx, t, loaders, tasks)
	stopTicks()
	if err != nil {
		return sum, err
	}
	progress(done.Load(), total, "keys")
	var ddl []func(context.Context, target.Session) error
	for _, stmt := range q.Statements("keys") {
		ddl = append(ddl, execTask(stmt))
	}
	if err := parallel(ctx, t, loaders, ddl); err != nil {
		return sum, fmt.Errorf("keys: %w", err)
	}
	if t.HasRoutines() {
		procs, err := sqlFor(t, "procs.sql")
		if err != nil {
			return sum, err
		}
		for _, name := range procs.Named("proc:") {
			if _, err := s.Exec(ctx, procs.Get(name)); err != nil {
				return sum, fmt.Errorf("create %s: %w", name, err)
			}
		}
	}
	progress(done.Load(), total, "analyze")
	if _, err := s.Exec(ctx, q.Get("analyze")); err != nil {
		return sum, fmt.Errorf("analyze: %w", err)
	}
	if _, err := s.Exec(ctx, q.Get("meta_write"), layout, w.warehouses, int64(w.seed), g.CLoad); err != nil {
		return sum, fmt.Errorf("record build: %w", err)
	}
	if err := s.QueryRow(ctx, q.Get("size")).Scan(&sum.Bytes); err != nil {
		return sum, fmt.Errorf("size: %w", err)
	}
	return sum, nil
}

// loadConstant is the load-time NURand C for C_LAST, fixed by the seed so
// that a run can pick a run-time C that satisfies clause 2.1.6.1.
func loadConstant(seed uint64) int {
	return workload.NewRand(seed, 0xC1A5).Int(0, 255)
}

func execTask(stmt string) func(context.Context, target.Session) error {
	return func(ctx context.Context, s target.Session) error {
		_, err := s.Exec(ctx, stmt)
		return err
	}
}

// parallel runs tasks in order over n sessions, each taking the next task
// when it is free. The first error cancels the rest. A cancelled ctx
// (Ctrl-C) is returned as such, even when it fell between tasks, so that
// the caller drops what was half made.
func parallel(ctx context.Context, t target.Target, n int, tasks []func(context.Context, target.Session) error) error {
	g, gctx := errgroup.WithContext(ctx)
	next := make(chan func(context.Context, target.Session) error)
	for range min(n, len(tasks)) {
		g.Go(func() error {
			s, err := t.Session(gctx)
			if err != nil {
				return err
			}
			defer s.Close()
			for task := range next {
				if err := task(gctx, s); err != nil {
					return err
				}
			}
			return nil
		})
	}
feed:
	for _, task := range tasks {
		select {
		case next <- task:
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
	target.RowSource
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
