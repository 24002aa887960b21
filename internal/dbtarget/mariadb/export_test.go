package mariadb

import "github.com/dbrig/dbrig/internal/dbtarget"

// UseInserts makes tg load with the shared multi-row INSERTs instead of
// LOAD DATA, for the benchmark that compares the two; undo restores it.
func UseInserts(tg dbtarget.Target) (undo func()) {
	t := tg.(*Target)
	saved := t.db.Bulk
	t.db.Bulk = nil
	return func() { t.db.Bulk = saved }
}
