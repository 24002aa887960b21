//go:build !cgo

package sqlite

import _ "modernc.org/sqlite"

const (
	driver  = "sqlite"
	pragmas = "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)"
)
