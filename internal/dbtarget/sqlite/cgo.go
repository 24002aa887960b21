//go:build cgo

package sqlite

import (
	"database/sql"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// driverName is mattn/go-sqlite3 with the math functions the CPU test's
// loop needs on every connection.
const driverName = "sqlite3-dbrig"

func init() {
	sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: addMath})
}

// addMath: mattn/go-sqlite3 leaves SQLite's math functions out unless
// built with -tags sqlite_math_functions (as `make build` is), and the
// CPU test's loop needs sqrt and floor. A connection that lacks them gets
// Go ones, as application-defined functions: a Go callback per call,
// slower than SQLite's own C functions, which the CPU test says.
func addMath(c *sqlite3.SQLiteConn) error {
	if _, err := c.Exec("SELECT sqrt(4.0), floor(2.5)", nil); err == nil {
		return nil
	}
	return registerMath(c)
}

func registerMath(c *sqlite3.SQLiteConn) error {
	if err := c.RegisterFunc("sqrt", sqrt, true); err != nil {
		return err
	}
	return c.RegisterFunc("floor", floor, true)
}

// sqrt and floor behave as SQLite's own: NULL for what is not a number
// and for the square root of a negative one; the floor of an integer is
// that integer.
func sqrt(x any) any {
	switch v := numeric(x).(type) {
	case int64:
		if v >= 0 {
			return math.Sqrt(float64(v))
		}
	case float64:
		if v >= 0 {
			return math.Sqrt(v)
		}
	}
	return nil
}

func floor(x any) any {
	switch v := numeric(x).(type) {
	case int64:
		return v
	case float64:
		return math.Floor(v)
	}
	return nil
}

// numeric is x as SQLite takes a math function's argument: text that
// reads as a number becomes one; anything else that is no number is nil.
func numeric(x any) any {
	s, ok := x.(string)
	if !ok {
		return x
	}
	s = strings.TrimSpace(s)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f
	}
	return nil
}

// dsn opens path in WAL mode; synchronous stays at SQLite's durable default.
func dsn(path string) string {
	return "file:" + path + "?_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate"
}

func busy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}
