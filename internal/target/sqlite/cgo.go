//go:build cgo

package sqlite

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

const driverName = "sqlite3"

// dsn opens path in WAL mode; synchronous stays at SQLite's durable default.
func dsn(path string) string {
	return "file:" + path + "?_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate"
}

func busy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}
