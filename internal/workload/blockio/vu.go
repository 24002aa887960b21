package blockio

import (
	"context"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
)

// vu is one virtual user: a terminal with a session of its own, which
// runs its operations by direct calls.
type vu struct {
	terminal
	*session
}

// newVU makes virtual user id (0-based) with a session of its own.
func newVU(ctx context.Context, t dbtarget.Target, cfg *runConfig, id int) (*vu, error) {
	s, err := openSession(ctx, t, cfg)
	if err != nil {
		return nil, err
	}
	return &vu{terminal: newTerminal(cfg, id), session: s}, nil
}

func (v *vu) Run(ctx context.Context, tx int, t driver.Tally) error {
	return v.session.run(ctx, &v.terminal, tx, t)
}
