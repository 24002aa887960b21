//go:build !cgo

package sqlite

import (
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Without cgo (no C compiler on the machine), the pure-Go translation of
// SQLite stands in, so `go run ./cmd/dbrig run tproc-c` works with only
// Go installed.
const driverName = "sqlite"

func dsn(path string) string {
	return "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
}

func busy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff // the primary code, without the extended bits
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}
