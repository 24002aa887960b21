package blockio

import (
	"time"

	"github.com/dbrig/dbrig/internal/workload"
)

// quotaWindow is the run of operations over which --update-pct is exact.
const quotaWindow = 100

// Streams of a virtual user's random numbers.
const (
	streamKeys  = 0xB10
	streamThink = 0xB11
)

// terminal is what a virtual user is without a connection: its random
// streams, its place in the update quota, and the operation Next chose,
// kept so that a retry repeats it. It does no I/O and takes about two
// hundred bytes, so that thousands can share a pool of sessions (issue
// 22).
type terminal struct {
	cfg      *runConfig
	r, think workload.Rand
	// id picks the terminal's table, and marks what its updates write.
	id     int
	lo, hi int64
	ops    int64 // operations chosen so far
	// updates counts the updates chosen so far, which makes each one's
	// value new.
	updates int64
	// left is the updates still due in the current hundred operations.
	left int
}

// newTerminal makes terminal id (0-based) of a run: its streams come
// from the run's seed and id.
func newTerminal(cfg *runConfig, id int) terminal {
	seed := workload.Mix(cfg.Seed, uint64(id))
	tm := terminal{cfg: cfg, id: id}
	tm.r.Seed(seed, streamKeys)
	tm.think.Seed(seed, streamThink)
	return tm
}

// Next picks the range and whether it is read or updated. Updates take
// their quota of each hundred operations on the ranges that end on an
// even key, as the method does, and on every operation once only as many
// are left as updates are due, so that the share is exact.
// In loop mode the database chooses them, and Next only says so.
func (tm *terminal) Next() int {
	c := tm.cfg
	if c.Mode == modeLoop {
		return txLoop
	}
	if tm.ops%quotaWindow == 0 {
		tm.left = c.UpdatePct
	}
	hi := int64(tm.r.Int(int(c.WorkUnit), int(c.Scale)))
	if c.Hotspot > 0 && (tm.ops+1)%int64(c.Hotspot) == 0 {
		hi = int64(tm.r.Int(int(c.WorkUnit), int(c.HotKeys)))
	}
	tm.lo, tm.hi = hi-c.WorkUnit, hi
	remaining := quotaWindow - int(tm.ops%quotaWindow)
	tm.ops++
	if tm.left > 0 && (hi%2 == 0 || remaining <= tm.left) {
		tm.left--
		tm.updates++
		return txUpdate
	}
	return txRead
}

// indexPages is how many of the index's pages a range scan reads: one per
// level above the leaves, and each leaf that holds a key of the range,
// whose boundaries the even packing of a sorted build puts every PerLeaf
// keys.
func (tm *terminal) indexPages() int64 {
	c := tm.cfg
	first, last := tm.lo/c.PerLeaf, (tm.hi-1)/c.PerLeaf
	return int64(c.Height-1) + last - first + 1
}

// Pacing is the think time after each operation, if the run asked for one.
func (tm *terminal) Pacing(int) (before, after time.Duration) {
	c := tm.cfg
	if c.ThinkMax == 0 {
		return 0, 0
	}
	return 0, c.ThinkMin + time.Duration(tm.think.Float64()*float64(c.ThinkMax-c.ThinkMin))
}
