// Package exitcode holds dbrig's exit codes in one place, and the error a
// user can fix, which every layer returns and the CLI turns into exit 2.
package exitcode

import "fmt"

// The process exit codes; --help names them.
const (
	Done     = 0 // the command did what it was asked
	Fail     = 1 // the command ran and found a failure (a check FAIL)
	Usage    = 2 // the user must change something: flag, URL, schema
	Internal = 3 // a bug in dbrig: a panic, turned into one line
	// Interrupted: a signal (Ctrl-C, SIGTERM) stopped the command before
	// it finished, and what it had is kept, marked interrupted: a CI
	// timeout must not read as a success (k6's external abort has a code
	// of its own too). 4 is the next code free: it is neither 128+N,
	// which shells report for a process a signal killed (this one was
	// not killed, it ended on its own with its result written), nor one
	// number for Ctrl-C and another for SIGTERM.
	Interrupted = 4
)

// UserError is a problem the user can fix; the CLI prints it as one line
// and exits with Usage.
type UserError struct{ Msg string }

func (e *UserError) Error() string { return e.Msg }

// Userf builds a UserError.
func Userf(format string, args ...any) error {
	return &UserError{Msg: fmt.Sprintf(format, args...)}
}
