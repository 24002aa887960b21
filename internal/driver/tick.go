package driver

import (
	"time"
)

// tickLoop records the series and reports progress each second, and has
// the run's health checked; a server given up ends the run.
func (r *runState) tickLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	types := len(r.states[0].done)
	last := make([]int64, types)
	var lastErrs, lastDoubts int64
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			p := Phase(r.phase.Load())
			cur := make([]int64, types)
			var errs, doubts int64
			for _, s := range r.states {
				for i := range cur {
					cur[i] += s.done[i].Load()
				}
				errs += s.errAll.Load()
				doubts += s.doubtAll.Load()
			}
			delta := make([]int64, types)
			for i := range cur {
				delta[i] = cur[i] - last[i]
			}
			last = cur
			elapsed := now.Sub(r.started)
			r.res.Series = append(r.res.Series, Point{T: elapsed.Round(time.Millisecond).Seconds(), Phase: p.String(), Counts: delta, Errors: errs - lastErrs, InDoubt: doubts - lastDoubts})
			lastErrs, lastDoubts = errs, doubts
			if r.health.check(now, r.states) {
				r.end()
			}
			if r.cfg.Progress != nil && p != PhaseDone {
				r.cfg.Progress(r.tick(p, elapsed, cur, delta, errs))
			}
		}
	}
}

// tick is the progress report of the second ending elapsed into the run:
// cur counts completions per type so far, delta in the second.
func (r *runState) tick(p Phase, elapsed time.Duration, cur, delta []int64, errs int64) Tick {
	cfg := r.cfg
	tk := Tick{Phase: p, Elapsed: elapsed, Counts: delta, Errors: errs, VUs: int(r.running.Load())}
	if r.pool != nil {
		tk.VUs = r.pool.started(elapsed)
		tk.Sessions, tk.Queued = int(r.pool.inUse.Load()), len(r.pool.ready)
	}
	if cfg.Each > 0 {
		tk.Total = int64(cfg.Each) * int64(len(r.states))
		for _, c := range cur {
			tk.Done += c
		}
		tk.Done += errs
		return tk
	}
	left := r.sched.Open.Sub(r.started) - elapsed
	if p == PhaseMeasure {
		end := cfg.Rampup + cfg.Duration
		if !r.sched.Close.IsZero() {
			end = r.sched.Close.Sub(r.started)
		}
		left = end - elapsed
	}
	tk.Left = max(left, 0)
	return tk
}
