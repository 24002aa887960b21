package blockio

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// quotaWindow is the run of operations over which --update-pct is exact.
const quotaWindow = 100

// Streams of a virtual user's random numbers.
const (
	streamKeys  = 0xB10
	streamThink = 0xB11
)

// vu is one session: its table, its statements, and the range Next chose,
// kept so that a retried Run repeats it.
type vu struct {
	workload.Conn
	cfg   *runConfig
	id    int
	procs bool
	r     *workload.Rand
	think *workload.Rand

	read, update string
	lo, hi       int64
	ops          int64 // operations chosen so far
	updates      int64
	// left is the updates still due in the current hundred operations.
	left int
	buf  []byte
}

func newVU(ctx context.Context, t dbtarget.Target, cfg *runConfig, id int) (*vu, error) {
	seed := workload.Mix(cfg.Seed, uint64(id))
	v := &vu{Conn: workload.Conn{T: t}, cfg: cfg, id: id, procs: cfg.Mode == workload.ModeProcs,
		r: workload.NewRand(seed, streamKeys), think: workload.NewRand(seed, streamThink),
		buf: make([]byte, cfg.Width)}
	table := tableName(id%cfg.Schemas + 1)
	prefix := ""
	if v.procs {
		prefix = "call:"
	}
	v.read = forTable(cfg.Q.Get(prefix+"read"), table)
	v.update = forTable(cfg.Q.Get(prefix+"update_"+cfg.Redo), table)
	if _, ok := cfg.Q["session"]; ok {
		v.Setup = cfg.Q.Statements("session")
	}
	if err := v.Reconnect(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// Next picks the range and whether it is read or updated. Updates take
// their quota of each hundred operations on the ranges that end on an
// even key, as the method does, and on every operation once only as many
// are left as updates are due, so that the share is exact.
func (v *vu) Next() int {
	c := v.cfg
	if v.ops%quotaWindow == 0 {
		v.left = c.UpdatePct
	}
	hi := int64(v.r.Int(int(c.WorkUnit), int(c.Scale)))
	if c.Hotspot > 0 && (v.ops+1)%int64(c.Hotspot) == 0 {
		hi = int64(v.r.Int(int(c.WorkUnit), int(c.HotKeys)))
	}
	v.lo, v.hi = hi-c.WorkUnit, hi
	remaining := quotaWindow - int(v.ops%quotaWindow)
	v.ops++
	if v.left > 0 && (hi%2 == 0 || remaining <= v.left) {
		v.left--
		return txUpdate
	}
	return txRead
}

func (v *vu) Run(ctx context.Context, tx int, t driver.Tally) error {
	var rows int64
	var err error
	switch {
	case tx == txRead:
		err = v.S.QueryRow(ctx, v.read, v.lo, v.hi).Scan(&rows)
	case v.procs:
		v.updates++
		err = v.S.QueryRow(ctx, v.update, v.lo, v.hi, serial(v.buf, v.id, v.updates)).Scan(&rows)
	default:
		v.updates++
		rows, err = v.S.Exec(ctx, v.update, v.lo, v.hi, serial(v.buf, v.id, v.updates))
	}
	if err != nil {
		return err
	}
	if rows != v.hi-v.lo {
		return fmt.Errorf("%w: keys %d to %d gave %d rows, not %d: the table is not as built", driver.ErrAbort, v.lo+1, v.hi, rows, v.hi-v.lo)
	}
	t[tRows] += rows
	t[tBlocks] += rows + v.indexPages()
	return nil
}

// indexPages is how many of the index's pages a range scan reads: one per
// level above the leaves, and each leaf that holds a key of the range,
// whose boundaries the even packing of a sorted build puts every PerLeaf
// keys.
func (v *vu) indexPages() int64 {
	c := v.cfg
	first, last := v.lo/c.PerLeaf, (v.hi-1)/c.PerLeaf
	return int64(c.Height-1) + last - first + 1
}

// Pacing is the think time after each operation, if the run asked for one.
func (v *vu) Pacing(int) (before, after time.Duration) {
	c := v.cfg
	if c.ThinkMax == 0 {
		return 0, 0
	}
	return 0, c.ThinkMin + time.Duration(v.think.Float64()*float64(c.ThinkMax-c.ThinkMin))
}
