package dbtarget

import (
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// Isolation is a transaction isolation level, as a run names it; ""
// leaves the database's own default.
type Isolation string

// The isolation levels a run can ask for. Read uncommitted is left out:
// no benchmark's answers hold under it.
const (
	ReadCommitted  Isolation = "read-committed"
	RepeatableRead Isolation = "repeatable-read"
	Serializable   Isolation = "serializable"
)

// ParseIsolation reads a level as a run names it; "" is the default.
func ParseIsolation(s string) (Isolation, error) {
	switch l := Isolation(strings.ToLower(strings.TrimSpace(s))); l {
	case "", ReadCommitted, RepeatableRead, Serializable:
		return l, nil
	}
	return "", exitcode.Userf("--isolation %q: want read-committed, repeatable-read or serializable", s)
}

// SQL is the level as SQL's SET TRANSACTION names it.
func (l Isolation) SQL() string {
	return strings.ToUpper(strings.ReplaceAll(string(l), "-", " "))
}

// Isolator is a target whose sessions can run at an isolation level of
// the run's choosing: every session it opens after Isolate runs its
// transactions at level, or Isolate says, in one line, why it cannot.
type Isolator interface {
	Isolate(level Isolation) error
}

// Isolate sets t's sessions to level; "" leaves them as they are.
func Isolate(t Target, level Isolation) error {
	if level == "" {
		return nil
	}
	i, ok := t.(Isolator)
	if !ok {
		return exitcode.Userf("--isolation: a %s target's sessions keep the database's own isolation", t.Kind())
	}
	return i.Isolate(level)
}
