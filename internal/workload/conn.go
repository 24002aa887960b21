package workload

import (
	"context"
	"fmt"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
)

// Conn is a virtual user's own session, which the driver reopens when it
// is lost. Embedded in a VU it gives it the driver's Reconnect and Close.
type Conn struct {
	T dbtarget.Target
	// Setup runs on every new session before the VU uses it.
	Setup []string
	// Prepare is prepared on every new session, where it is a
	// dbtarget.Preparer, so that the VU's first calls of these statements
	// cost no extra round trip, and no extra transaction in the
	// database's count, inside the measured window.
	Prepare []string
	S       dbtarget.Session
	// reads counts the transactions ReadRow has run, which MarkServer
	// leaves out of the database's count.
	reads int64
	// node is the node key the session was first opened with, where the
	// run gave one (dbtarget.WithNode): a session reopened goes back to
	// that node first, on a target of several.
	node  int
	keyed bool
}

// Flush publishes what the session has done to the database's own
// counters, where it is a dbtarget.Flusher; the driver calls it at the
// window's edges.
func (c *Conn) Flush(ctx context.Context) error {
	if f, ok := c.S.(dbtarget.Flusher); ok {
		return f.Flush(ctx)
	}
	return nil
}

// Reconnect replaces the session with a new one, set up, on the node the
// first one was opened on where the target has several.
func (c *Conn) Reconnect(ctx context.Context) error {
	if k, ok := dbtarget.NodeKey(ctx); ok {
		c.node, c.keyed = k, true
	} else if c.keyed {
		ctx = dbtarget.WithNode(ctx, c.node)
	}
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
	if p, ok := s.(dbtarget.Preparer); ok {
		if err := p.Prepare(ctx, c.Prepare...); err != nil {
			s.Close()
			return fmt.Errorf("prepare the session's statements: %w", err)
		}
	}
	c.S = s
	return nil
}

// Committing is err, the error of what commits a transaction (its
// COMMIT, the batch it ends, the one call of a routine that commits, a
// write in autocommit), marked in doubt (driver.WrapInDoubt) where the
// connection was lost with it: the commit may have happened, its answer
// lost. A lost connection may also have kept it from leaving; in doubt
// covers both, and never counts as committed.
func (c *Conn) Committing(err error) error {
	if err != nil && c.T.Classify(err) == dbtarget.ErrConnLost {
		return driver.WrapInDoubt(err)
	}
	return err
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
// was lost (dbtarget.Reconnecting), so that a server restarted mid-run
// still gives a mark.
func (c *Conn) ReadRow(ctx context.Context, sql string, dest ...any) error {
	err := dbtarget.Reconnecting(ctx, c.T.Classify, c.Reconnect, func(ctx context.Context) error {
		return c.S.QueryRow(ctx, sql).Scan(dest...)
	})
	if err == nil {
		c.reads++
	}
	return err
}
