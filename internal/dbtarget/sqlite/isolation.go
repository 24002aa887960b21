package sqlite

import (
	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

var _ dbtarget.Isolator = (*Target)(nil)

// Isolate takes serializable only: SQLite runs one writer at a time, so
// its transactions are always serializable, and no level is weaker.
func (t *Target) Isolate(level dbtarget.Isolation) error {
	if level != dbtarget.Serializable {
		return exitcode.Userf("--isolation %s: SQLite's transactions are always serializable; leave --isolation out, or give serializable", level)
	}
	return nil
}
