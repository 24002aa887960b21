package workload

import (
	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// Implementations of a workload's transactions.
const (
	// ModeProcs runs each transaction as one stored-routine call.
	ModeProcs = "procs"
	// ModeSQL runs each transaction as client-side statements.
	ModeSQL = "sql"
)

// PickMode resolves --mode for t: procs where the database has stored
// routines unless the user asked otherwise.
func PickMode(mode string, t dbtarget.Target) (string, error) {
	switch {
	case mode == "" && t.HasRoutines():
		return ModeProcs, nil
	case mode == "":
		return ModeSQL, nil
	case mode == ModeProcs && !t.HasRoutines():
		return "", exitcode.Userf("--mode procs needs stored routines, which %s does not have: use --mode sql", t.Kind())
	case mode != ModeProcs && mode != ModeSQL:
		return "", exitcode.Userf("--mode %q: use procs or sql", mode)
	}
	return mode, nil
}
