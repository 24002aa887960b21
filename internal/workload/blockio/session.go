package blockio

import (
	"context"
	"fmt"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// session is one connection and what an operation writes through it.
type session struct {
	workload.Conn
	cfg   *runConfig
	procs bool
	buf   []byte
}

func openSession(ctx context.Context, t dbtarget.Target, cfg *runConfig) (*session, error) {
	s := &session{Conn: workload.Conn{T: t}, cfg: cfg, procs: cfg.Mode == workload.ModeProcs,
		buf: make([]byte, cfg.Width)}
	if _, ok := cfg.Q["session"]; ok {
		s.Setup = cfg.Q.Statements("session")
	}
	if err := s.Reconnect(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Run is a pool's: it lends the session to terminal term, one of this
// workload's own.
func (s *session) Run(ctx context.Context, term driver.Terminal, tx int, t driver.Tally) error {
	return s.run(ctx, term.(*terminal), tx, t)
}

// run runs terminal tm's operation tx, which Next chose, on tm's table:
// table i mod --schemas for terminal i, whichever session runs it.
func (s *session) run(ctx context.Context, tm *terminal, tx int, t driver.Tally) error {
	if tx == txLoop && s.cfg.Mode == modeLoop {
		return s.loop(ctx, tm, t)
	}
	table := tm.id % s.cfg.Schemas
	// ints, not int64s: a PostgreSQL session's call encodes the
	// arguments and reads the columns of ints itself, and leaves other
	// types to pgx's generic path, which costs several times the CPU.
	lo, hi := int(tm.lo), int(tm.hi)
	var n int
	var err error
	switch {
	case tx == txRead:
		err = s.S.QueryRow(ctx, s.cfg.reads[table], lo, hi).Scan(&n)
	case s.procs:
		err = s.S.QueryRow(ctx, s.cfg.updates[table], lo, hi, serial(s.buf, tm.id, tm.updates)).Scan(&n)
	default:
		var affected int64
		affected, err = s.S.Exec(ctx, s.cfg.updates[table], lo, hi, serial(s.buf, tm.id, tm.updates))
		n = int(affected)
	}
	if err != nil {
		return err
	}
	rows := int64(n)
	if rows != tm.hi-tm.lo {
		return fmt.Errorf("%w: keys %d to %d gave %d rows, not %d: the table is not as built", driver.ErrAbort, tm.lo+1, tm.hi, rows, tm.hi-tm.lo)
	}
	t[tRows] += rows
	t[tBlocks] += rows*s.cfg.RowPages + tm.indexPages()
	return nil
}
