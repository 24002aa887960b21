//go:build cgo && !sqlite_math_functions

package cpu

// mattn/go-sqlite3 without the tag has no math functions: the target
// registers Go ones, and the result must say so.
const (
	wantFunctions = functionsApp
	wantLine      = "registered from Go"
)
