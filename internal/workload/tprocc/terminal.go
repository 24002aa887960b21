package tprocc

import (
	"time"

	"github.com/dbrig/dbrig/internal/workload"
)

// The mix of clause 5.2.4.2, dealt from a deck: each hundred transactions
// a terminal runs hold exactly this many of each type.
var mixCards = []int{txNewOrder: 45, txPayment: 43, txOrderStatus: 4, txDelivery: 4, txStockLevel: 4}

// keyingTime and thinkMean are the minimum keying times and mean think
// times of clause 5.2.5.7, by transaction type.
var (
	keyingTime = [...]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	thinkMean  = [...]float64{12, 12, 10, 5, 5}
)

// Streams of a terminal's random numbers, so that turning pacing on or
// off does not change the transactions it generates.
const (
	streamInputs = 0x7C1
	streamPacing = 0x7C2
)

// terminal is what a virtual user is without a connection: its random
// streams, its mix deck (clause 5.2.4.2 wants the type known before the
// keying), its home warehouse and Stock-Level district, and whether the
// type Next chose still needs its inputs. It does no I/O and takes a few
// hundred bytes, so that thousands can share a pool of sessions (issue
// 22); the session it runs on draws the inputs from it (session.run).
type terminal struct {
	cfg     *runConfig
	r, pace workload.Rand
	mix     workload.Deck

	home  int // home warehouse
	slevD int // the district Stock-Level always looks at

	// fresh says that Next chose a transaction whose inputs are not drawn
	// yet: the first attempt draws them, a retry repeats them.
	fresh bool
}

// homeOf is terminal id's home warehouse.
func homeOf(cfg *runConfig, id int) int { return id%cfg.Warehouses + 1 }

// newTerminal makes terminal id (0-based) of a run: its streams come from
// the run's seed and id, its home from id, so that any number of
// terminals spread evenly over the warehouses and districts.
func newTerminal(cfg *runConfig, id int) terminal {
	seed := workload.Mix(cfg.Seed, uint64(id))
	tm := terminal{
		cfg:   cfg,
		mix:   workload.NewDeck(mixCards...),
		home:  homeOf(cfg, id),
		slevD: (id/cfg.Warehouses)%districtsPerWH + 1,
	}
	tm.r.Seed(seed, streamInputs)
	tm.pace.Seed(seed, streamPacing)
	return tm
}

// Next deals the next transaction type; its inputs are drawn when it
// first runs.
func (tm *terminal) Next() int {
	tm.fresh = true
	return tm.mix.Deal(&tm.r)
}

// Pacing: the keying time is fixed, the think time exponential; none
// unless the run asked for them.
func (tm *terminal) Pacing(tx int) (keying, think time.Duration) {
	if !tm.cfg.Keying {
		return 0, 0
	}
	return keyingTime[tx], time.Duration(tm.pace.Exp(thinkMean[tx]) * float64(time.Second))
}

// warehouse is the warehouse of the next transaction: the home warehouse,
// or with AllWarehouses any of them.
func (tm *terminal) warehouse() int {
	if tm.cfg.AllWarehouses {
		return tm.r.Int(1, tm.cfg.Warehouses)
	}
	return tm.home
}

// otherWarehouse is uniform over the warehouses other than w; there must
// be at least two.
func (tm *terminal) otherWarehouse(w int) int {
	o := tm.r.Int(1, tm.cfg.Warehouses-1)
	if o >= w {
		o++
	}
	return o
}
