package workload

import (
	"context"
	"fmt"

	"github.com/dbrig/dbrig/internal/target"
)

// Conn is a virtual user's own session, which the driver reopens when it
// is lost. Embedded in a VU it gives it the driver's Reconnect and Close.
type Conn struct {
	T target.Target
	// Setup runs on every new session before the VU uses it.
	Setup []string
	S     target.Session
}

// Reconnect replaces the session with a new one, set up.
func (c *Conn) Reconnect(ctx context.Context) error {
	c.Close()
	s, err := c.T.Session(ctx)
	if err != nil {
		return err
	}
	for _, stmt := range c.Setup {
		if _, err := s.Exec(ctx, stmt); err != nil {
			s.Close()
			return fmt.Errorf("set up the session: %w", err)
		}
	}
	c.S = s
	return nil
}

// Close closes the session, if it is open.
func (c *Conn) Close() error {
	if c.S == nil {
		return nil
	}
	err := c.S.Close()
	c.S = nil
	return err
}

// ReadRow reads one row of sql into dest, reopening the session when it
// was lost (target.Reconnecting), so that a server restarted mid-run
// still gives a mark.
func (c *Conn) ReadRow(ctx context.Context, sql string, dest ...any) error {
	return target.Reconnecting(ctx, c.T.Classify, c.Reconnect, func(ctx context.Context) error {
		return c.S.QueryRow(ctx, sql).Scan(dest...)
	})
}
