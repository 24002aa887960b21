package dvdstore

import (
	"time"

	"github.com/dbrig/dbrig/internal/workload"
)

// Streams of a virtual user's random numbers.
const (
	streamOrder = 0xD51
	streamThink = 0xD52
)

// terminal is what a virtual user is without a connection: its random
// streams and where it is in its customer's order, which Next walks step
// by step: a login or a registration, the browses, the purchase. It does
// no I/O and takes about a hundred bytes, so that thousands can share a
// pool of sessions (issue 22); the session that runs a step draws its
// inputs from it (session.run).
type terminal struct {
	cfg      *runConfig
	r, think workload.Rand

	customer    int64 // logged in, or 0 before the login
	browsesLeft int
	// orderTime is the steps' time of the order so far.
	orderTime time.Duration
	// fresh says that Next chose a step whose inputs are not drawn yet:
	// the first attempt draws them, a retry repeats them.
	fresh bool
}

// newTerminal makes terminal id (0-based) of a run: its streams come from
// the run's seed and id.
func newTerminal(cfg *runConfig, id int) terminal {
	seed := workload.Mix(cfg.seed, uint64(id))
	tm := terminal{cfg: cfg}
	tm.r.Seed(seed, streamOrder)
	tm.think.Seed(seed, streamThink)
	return tm
}

// upTo is 1 to 2n-1, uniform: a mean of n.
func (tm *terminal) upTo(n int) int { return tm.r.Int(1, 2*n-1) }

func (tm *terminal) Next() int {
	tm.fresh = true
	switch {
	case tm.customer == 0 && tm.r.Int(1, 100) <= tm.cfg.pctNew:
		return stepNewCustomer
	case tm.customer == 0:
		return stepLogin
	case tm.browsesLeft > 0:
		return stepBrowse
	}
	return stepPurchase
}

// Pacing is the think time after an order.
func (tm *terminal) Pacing(step int) (before, after time.Duration) {
	if step != stepPurchase || tm.cfg.think == 0 {
		return 0, 0
	}
	return 0, time.Duration(tm.think.Float64() * 2 * float64(tm.cfg.think))
}

// started begins an order's browsing for customer id.
func (tm *terminal) started(id int64) {
	tm.customer, tm.browsesLeft = id, tm.upTo(tm.cfg.searches)
}
