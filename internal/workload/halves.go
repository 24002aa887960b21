package workload

import (
	"context"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
)

// A workload that paces its virtual users can split each into two halves,
// so that a pool of sessions can serve many terminals (driver.Pooled):
// the terminal picks and paces its transactions and does no I/O, the
// session runs them. Halves makes both, and the per-VU form of a run: a
// terminal with a session of its own (VU).

// Session is a session half: a driver.Session that publishes its work at
// the window's edges, as every Conn does.
type Session interface {
	driver.Session
	driver.Flusher
}

// Halves makes a run's virtual users from their halves: Terminal makes
// terminal id, Open opens a session. Embedded in a Run, it makes the run
// a driver.Pooled and gives it NewVU.
type Halves[T driver.Terminal, S Session] struct {
	Terminal func(id int) T
	Open     func(ctx context.Context) (S, error)
}

// NewVU opens virtual user id: terminal id with a session of its own.
func (h Halves[T, S]) NewVU(ctx context.Context, id int) (driver.VU, error) {
	s, err := h.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &VU[T, S]{Terminal: h.Terminal(id), Session: s}, nil
}

func (h Halves[T, S]) NewTerminal(id int) driver.Terminal { return h.Terminal(id) }

func (h Halves[T, S]) NewSession(ctx context.Context, _ int) (driver.Session, error) {
	s, err := h.Open(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// VU is a terminal with a session of its own, the virtual user of a run
// without a pool.
type VU[T driver.Terminal, S Session] struct {
	Terminal T
	Session  S
}

func (v *VU[T, S]) Next() int                                   { return v.Terminal.Next() }
func (v *VU[T, S]) Pacing(tx int) (before, after time.Duration) { return v.Terminal.Pacing(tx) }
func (v *VU[T, S]) Run(ctx context.Context, tx int, t driver.Tally) error {
	return v.Session.Run(ctx, v.Terminal, tx, t)
}
func (v *VU[T, S]) Reconnect(ctx context.Context) error { return v.Session.Reconnect(ctx) }
func (v *VU[T, S]) Flush(ctx context.Context) error     { return v.Session.Flush(ctx) }
func (v *VU[T, S]) Close() error                        { return v.Session.Close() }
