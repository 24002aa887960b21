//go:build !cgo || sqlite_math_functions

package cpu

// This build's SQLite has its own math functions: modernc's translation
// always, mattn/go-sqlite3 with the tag.
const (
	wantFunctions = functionsOwn
	wantLine      = "sqlite's own"
)
