package workload

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sync/errgroup"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
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
		g.Go(guarded(func() error { return worker(gctx, i, next) }))
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

// guarded is f, returning a panic in it as its error (an *exitcode.Panic):
// for the goroutines of an errgroup, which run a workload's code (its
// tasks, its rows) where no recover of the command's reaches.
func guarded(f func() error) func() error {
	return func() (err error) {
		defer exitcode.Recover(func(p error) { err = p })
		return f()
	}
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

// countRows counts src's rows into n, keeping it a FieldSource if it is one.
func countRows(src dbtarget.RowSource, n *atomic.Int64) dbtarget.RowSource {
	c := &counted{RowSource: src, n: n}
	if fs, ok := src.(dbtarget.FieldSource); ok {
		return &countedFields{counted: c, fs: fs}
	}
	return c
}

func (c *counted) Next() bool { return c.count(c.RowSource.Next()) }

// count counts a row if there was one, and flushes the count at the end.
func (c *counted) count(row bool) bool {
	if row {
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

// countedFields is counted of a FieldSource.
type countedFields struct {
	*counted
	fs dbtarget.FieldSource
}

func (c *countedFields) WriteRow(w dbtarget.FieldWriter) bool { return c.count(c.fs.WriteRow(w)) }

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

// FieldFunc adapts a row function to dbtarget.FieldSource: next writes the
// following row, of columns values, to w and reports whether there was
// one. Read through Next and Values, the values are boxed into a slice
// (strings from TextBytes copied into blocks, as Rand's), and a row of
// other than columns values ends the source with an error.
func FieldFunc(columns int, next func(w dbtarget.FieldWriter) bool) dbtarget.FieldSource {
	return &fieldSource{row: boxer{vals: make([]any, columns)}, next: next}
}

type fieldSource struct {
	row  boxer
	next func(dbtarget.FieldWriter) bool
	err  error
}

func (s *fieldSource) WriteRow(w dbtarget.FieldWriter) bool { return s.next(w) }

func (s *fieldSource) Next() bool {
	if s.err != nil {
		return false
	}
	s.row.n = 0
	if !s.next(&s.row) {
		return false
	}
	if s.row.n != len(s.row.vals) {
		s.err = fmt.Errorf("workload: a row of %d values for %d columns", s.row.n, len(s.row.vals))
		return false
	}
	return true
}

func (s *fieldSource) Values() ([]any, error) { return s.row.vals, nil }
func (s *fieldSource) Err() error             { return s.err }

// stringBlock hands out bytes for strings that are only ever read once
// made: it is only ever appended to, so each string costs no allocation of
// its own and stays valid, and unchanged, for as long as anyone holds it.
type stringBlock []byte

// blockSize is the size of a string block: big enough that allocations are
// rare, small enough that a held string pins little.
const blockSize = 16 << 10

// copyString returns a string of from's bytes, carved out of the block.
// Bytes once handed out are never written again, which is what makes the
// unsafe.String views sound.
func (b *stringBlock) copyString(from []byte) string {
	n := len(from)
	if n == 0 {
		return ""
	}
	if cap(*b)-len(*b) < n {
		*b = make([]byte, 0, max(blockSize, n))
	}
	s := len(*b)
	*b = append(*b, from...)
	return unsafe.String(&(*b)[s], n)
}

// boxer is a dbtarget.FieldWriter into a slice of values.
type boxer struct {
	vals    []any
	n       int // values written to the row so far
	strings stringBlock
}

func (b *boxer) put(v any) {
	if b.n < len(b.vals) {
		b.vals[b.n] = v
	}
	b.n++
}

func (b *boxer) Int(v int)          { b.put(v) }
func (b *boxer) Float(v float64)    { b.put(v) }
func (b *boxer) Text(s string)      { b.put(s) }
func (b *boxer) TextBytes(s []byte) { b.put(b.strings.copyString(s)) }
func (b *boxer) Time(t time.Time)   { b.put(t) }
func (b *boxer) Null()              { b.put(nil) }
