package postgres

import "github.com/dbrig/dbrig/internal/dbtarget"

var _ dbtarget.Isolator = (*Target)(nil)

// Isolate has every session opened from now on start with
// default_transaction_isolation at level, in its start-up packet: no
// round trip, and no statement the server counts as a transaction. Under
// serializable the server aborts what would break the serial order with
// SQLSTATE 40001, which the driver retries.
func (t *Target) Isolate(level dbtarget.Isolation) error {
	t.cfg.RuntimeParams["default_transaction_isolation"] = level.SQL()
	return nil
}
