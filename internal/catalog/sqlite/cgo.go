//go:build cgo

package sqlite

import _ "github.com/mattn/go-sqlite3"

const (
	driver  = "sqlite3"
	pragmas = "_journal_mode=WAL&_busy_timeout=10000&_synchronous=FULL"
)
