package workload

import (
	"cmp"
	"context"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// pipeline hands a load's jobs, in order, to a pool of sessions, and with
// them each table's follow-up (its keys, its statistics): once the last
// job of a table is done, that table's tasks are next in line, ahead of
// the remaining jobs, the biggest table's first, all of them on one
// session, in order. A table's keys are built while other tables still
// load, so the pool has no tail where one session sorts a big index and
// the others wait for it, and the machine's idle cores at the end of the
// load (the last jobs) sort and analyze instead.
type pipeline struct {
	mu     sync.Mutex
	wake   *sync.Cond
	jobs   []LoadJob
	left   map[string]int    // jobs of a table not yet done
	then   map[string][]Task // a table's tasks, until they are ready
	size   map[string]int64  // a table's rows, to order the ready
	ready  []string          // tables whose tasks are next
	active int               // items being worked on
	failed bool
}

// item is one piece of the pipeline: a load job, or a table's tasks.
type item struct {
	job   *LoadJob
	tasks []Task
}

func newPipeline(jobs []LoadJob, then map[string][]Task) *pipeline {
	p := &pipeline{jobs: jobs, left: map[string]int{}, then: then, size: map[string]int64{}}
	p.wake = sync.NewCond(&p.mu)
	for _, j := range jobs {
		p.left[j.Table]++
		p.size[j.Table] += j.Rows
	}
	for table := range then {
		if p.left[table] == 0 {
			p.ready = append(p.ready, table)
		}
	}
	p.sortReady()
	return p
}

// sortReady puts the biggest table's tasks first, ties by name.
func (p *pipeline) sortReady() {
	slices.SortFunc(p.ready, func(a, b string) int {
		if c := cmp.Compare(p.size[b], p.size[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

// next waits for the next item, false when there is none left (or the
// pipeline failed).
func (p *pipeline) next() (item, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		switch {
		case p.failed:
			return item{}, false
		case len(p.ready) > 0:
			table := p.ready[0]
			p.ready = p.ready[1:]
			p.active++
			tasks := p.then[table]
			delete(p.then, table)
			return item{tasks: tasks}, true
		case len(p.jobs) > 0:
			j := &p.jobs[0]
			p.jobs = p.jobs[1:]
			p.active++
			return item{job: j}, true
		case p.active == 0:
			return item{}, false
		}
		// Jobs in flight may yet make a table's tasks ready.
		p.wake.Wait()
	}
}

// done ends an item: a table's last job makes its tasks ready.
func (p *pipeline) done(it item, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active--
	if err != nil {
		p.failed = true
	}
	if it.job != nil {
		if p.left[it.job.Table]--; p.left[it.job.Table] == 0 {
			if _, ok := p.then[it.job.Table]; ok {
				p.ready = append(p.ready, it.job.Table)
				p.sortReady()
			}
		}
	}
	p.wake.Broadcast()
}

// fail stops handing out items.
func (p *pipeline) fail() {
	p.mu.Lock()
	p.failed = true
	p.mu.Unlock()
	p.wake.Broadcast()
}

// LoadThen is Load with each table's follow-up: then[table] runs, in
// order on one session, as soon as the table's last job is done (see
// pipeline); tasks of a table with no jobs are ready from the start.
// It returns the rows loaded once every job and task is done.
func LoadThen(ctx context.Context, t dbtarget.Target, n int, jobs []LoadJob, then map[string][]Task,
	what string, progress func(done, total int64, what string)) (int64, error) {
	if !t.ParallelWrites() {
		n = 1
	}
	var total int64
	for _, j := range jobs {
		total += j.Rows
	}
	defer lessGC()()
	var done, loaded atomic.Int64
	progress(0, total, what)
	stopTicks := ticker(func() { progress(done.Load(), total, what) })
	defer stopTicks()
	p := newPipeline(slices.Clone(jobs), then)
	g, gctx := errgroup.WithContext(ctx)
	stop := context.AfterFunc(gctx, p.fail)
	defer stop()
	for range n {
		g.Go(guarded(func() error {
			s, err := t.Session(gctx)
			if err != nil {
				p.fail()
				return err
			}
			defer s.Close()
			for {
				it, ok := p.next()
				if !ok {
					return gctx.Err()
				}
				err := runItem(gctx, s, it, &done, &loaded)
				p.done(it, err)
				if err != nil {
					return err
				}
			}
		}))
	}
	err := g.Wait()
	if ctx.Err() != nil {
		return loaded.Load(), context.Cause(ctx)
	}
	return loaded.Load(), err
}

// loadGCPercent is the garbage collector's GOGC during a load. A load
// makes its rows' strings, and the values boxing them, by the hundred
// megabytes, all dead once encoded, over a live heap of a few: at the
// default 100 the collector ran every few megabytes, and took a sixth of
// a tproc-c build's client CPU (1.17-1.26 s, 0.93-1.06 s at 400 in
// alternating builds of 4 warehouses; 1000 saved no more).
const loadGCPercent = 400

// lessGC raises GOGC to loadGCPercent, unless it is set higher (or off)
// already, until the returned restore is called.
func lessGC() (restore func()) {
	old := debug.SetGCPercent(loadGCPercent)
	if old < 0 || old > loadGCPercent {
		debug.SetGCPercent(old)
	}
	return func() { debug.SetGCPercent(old) }
}

// runItem loads a job, counting its rows, or runs a table's tasks.
func runItem(ctx context.Context, s dbtarget.Session, it item, done, loaded *atomic.Int64) error {
	if j := it.job; j != nil {
		n, err := s.Load(ctx, j.Table, j.Columns, countRows(j.Source(), done))
		loaded.Add(n)
		return err
	}
	for _, task := range it.tasks {
		if err := task(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
