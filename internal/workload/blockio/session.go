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
	table := tm.id % s.cfg.Schemas
	var rows int64
	var err error
	switch {
	case tx == txRead:
		err = s.S.QueryRow(ctx, s.cfg.reads[table], tm.lo, tm.hi).Scan(&rows)
	case s.procs:
		err = s.S.QueryRow(ctx, s.cfg.updates[table], tm.lo, tm.hi, serial(s.buf, tm.id, tm.updates)).Scan(&rows)
	default:
		rows, err = s.S.Exec(ctx, s.cfg.updates[table], tm.lo, tm.hi, serial(s.buf, tm.id, tm.updates))
	}
	if err != nil {
		return err
	}
	if rows != tm.hi-tm.lo {
		return fmt.Errorf("%w: keys %d to %d gave %d rows, not %d: the table is not as built", driver.ErrAbort, tm.lo+1, tm.hi, rows, tm.hi-tm.lo)
	}
	t[tRows] += rows
	t[tBlocks] += rows*s.cfg.RowPages + tm.indexPages()
	return nil
}
