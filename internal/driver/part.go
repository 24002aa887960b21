package driver

import (
	"fmt"
	"time"
)

// Part is one process's share of a run split over several (Index of Of,
// 1-based); the zero value is the whole run. The virtual users (and the
// sessions of a pooled run) are striped over the parts by id, as k6's
// execution segments are: part i runs ids i-1, i-1+n, i-1+2n, ..., so
// that every part ramps up over the whole ramp-up, and the parts together
// run exactly the ids of the whole run, each once, at the same moments.
type Part struct{ Index, Of int }

// Whole says whether p is the whole run.
func (p Part) Whole() bool { return p.Of == 0 }

// IDs is the ids of 0..total-1 that p runs, in order.
func (p Part) IDs(total int) []int {
	ids := make([]int, 0, p.Share(total))
	for id := p.first(); id < total; id += p.step() {
		ids = append(ids, id)
	}
	return ids
}

// Share is how many of 0..total-1 p runs: len(p.IDs(total)). It
// overflows for no total.
func (p Part) Share(total int) int {
	if total <= p.first() {
		return 0
	}
	return (total-p.first()-1)/p.step() + 1
}

// String is "2/3"; "" for the whole run.
func (p Part) String() string {
	if p.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", p.Index, p.Of)
}

// first is p's first id, step the stride between its ids.
func (p Part) first() int {
	if p.Whole() {
		return 0
	}
	return p.Index - 1
}

func (p Part) step() int { return max(p.Of, 1) }

// check refuses a part that is not one of its run's, or that would run
// nothing of total.
func (p Part) check(total int, what string) error {
	if p.Whole() {
		return nil
	}
	if p.Index < 1 || p.Index > p.Of {
		return fmt.Errorf("part %d/%d: want a part from 1 to %d", p.Index, p.Of, p.Of)
	}
	if p.Share(total) < 1 {
		return fmt.Errorf("part %s has none of the %d %s: at least one a part", p, total, what)
	}
	return nil
}

// Schedule is when a run's parts do what together, each on its own
// (local) clock: the run's clock starts at Start, the ramp-up ends at
// Open, and the window closes at Close. At each edge every holder (VU, or
// session) stays still for Hold: the window opens Hold after Open, and
// the database's side is read (Config.WindowEdge) Hold/2 into each hold,
// when no part runs a transaction and every part has published what it
// did.
type Schedule struct {
	Start, Open, Close time.Time
	Hold               time.Duration
}

// check refuses a schedule whose instants are out of order.
func (s Schedule) check() error {
	if s.Open.Before(s.Start) || !s.Close.After(s.Open) || s.Hold < 0 {
		return fmt.Errorf("a schedule out of order: start %s, open %s, close %s, hold %s",
			s.Start.Format(time.RFC3339Nano), s.Open.Format(time.RFC3339Nano), s.Close.Format(time.RFC3339Nano), s.Hold)
	}
	return nil
}

// rampDelay is how far into the ramp-up virtual user (or terminal) id of
// the whole run's vus starts: the same in every part.
func rampDelay(rampup time.Duration, id, vus int) time.Duration {
	if vus <= 1 {
		return 0
	}
	return rampup * time.Duration(id) / time.Duration(vus)
}
