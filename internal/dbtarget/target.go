// Package dbtarget is what dbrig knows about a database it drives: how to
// open it, how to talk to it from one virtual user, how to bulk-load it,
// and how to read its own counters. It knows nothing about workloads.
package dbtarget

import (
	"context"
	"errors"
	"github.com/dbrig/dbrig/internal/exitcode"
	"slices"
	"strings"
	"time"
)

// Target is an opened database.
type Target interface {
	// Kind names the target's implementation ("postgres", "sqlite"), as
	// results record it.
	Kind() string
	// Dialect is the SQL the target speaks, which workloads pick their
	// statements by.
	Dialect() Dialect
	// URL is the connection string with any secret removed.
	URL() string
	// Version is the server's version string.
	Version(ctx context.Context) (string, error)
	// Session opens a dedicated connection, one per virtual user or loader.
	Session(ctx context.Context) (Session, error)
	// Xacts reads the database's own committed+rolled-back transaction
	// counter for this database; ok is false where the database keeps none.
	Xacts(ctx context.Context) (n int64, ok bool, err error)
	// Size is the database's size on disk in bytes.
	Size(ctx context.Context) (int64, error)
	// Classify tells the driver what an error means for the next attempt.
	Classify(err error) ErrClass
	// HasRoutines reports whether the database runs stored routines.
	HasRoutines() bool
	// ParallelWrites reports whether several sessions can write at once;
	// if not, loading in parallel only adds contention.
	ParallelWrites() bool
	Close() error
}

// Restartable is a target whose server can restart under a run, and keeps
// its counters only for its current life: PostgreSQL forgets them when it
// recovers from a crash, so Xacts starts again from zero. Started tells one
// life from the next, so that a counter read in two is not taken for a rate.
type Restartable interface {
	Started(ctx context.Context) (time.Time, error)
}

// Located is a target whose server can say where it is. Across a
// failover the window's start is read on one server and its end on
// another, and a counter each server keeps for itself gives no rate
// between the two.
type Located interface {
	// ServerAddr names the server the target's own connection reaches
	// now: its address and port as it sees itself, or the socket reached.
	ServerAddr(ctx context.Context) (string, error)
}

// Session is one connection. Statements are cached per SQL text, so a
// workload can pass the same string on every call without preparing.
type Session interface {
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// Load bulk-loads rows into table, the fastest way the database offers.
	Load(ctx context.Context, table string, columns []string, src RowSource) (int64, error)
	Close() error
}

// Preparer is a Session that can prepare statements ahead of their first
// use. On PostgreSQL a prepare is a round trip (Parse, Describe, Sync) that
// the server counts as a transaction of its own, without logging it as a
// statement: a virtual user that prepared on first use added one to the
// database's count inside the measured window for each statement it first
// ran there, which in a keyed run, where a virtual user runs a few
// transactions a minute, was most of them. Prepared as the session opens,
// they are all before the window.
type Preparer interface {
	Prepare(ctx context.Context, sqls ...string) error
}

// Flusher is a Session whose database publishes what it did to its own
// counters some time after it did it (PostgreSQL: when the backend goes
// idle, at most once a second, and a start-up or a prepare only with the
// next statement that reads a table). Flush publishes it now, so that a
// read of the counters that follows sees everything the session has
// done. The transactions Flush runs itself are left out of the target's
// Xacts.
type Flusher interface {
	Flush(ctx context.Context) error
}

// FlushCounter is a Target that counts the transactions its sessions'
// Flush has run so far. In a run split over several processes each
// process leaves only its own flushes out of Xacts; the flushes the
// others ran inside the window that one process's marks span are added
// up from their counts, and taken out when the parts are merged.
type FlushCounter interface {
	Flushes() int64
}

// Row is a single-row result.
type Row interface {
	Scan(dest ...any) error
}

// ErrRow is a row whose query failed before it ran: Scan returns Err.
type ErrRow struct{ Err error }

func (r ErrRow) Scan(...any) error { return r.Err }

// Rows is a multi-row result.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// RowSource yields rows for Load. Values may reuse its slice between calls.
// Its shape matches pgx.CopyFromSource so PostgreSQL takes it as is.
type RowSource interface {
	Next() bool
	Values() ([]any, error)
	Err() error
}

// FieldSource is a RowSource that can also write its rows, value by value,
// straight into a target's own encoding of them, with no slice of
// interfaces in between: a target that encodes rows itself reads it
// through WriteRow, any other through Next and Values, and the two give
// the same rows. A source is read one way only.
type FieldSource interface {
	RowSource
	// WriteRow writes the next row's values to w, in column order, and
	// reports whether there was one.
	WriteRow(w FieldWriter) bool
}

// FieldWriter takes one row's values, in column order, each as the value
// Values would hold: Int an int, Float a float64, Text and TextBytes a
// string, Time a time.Time, Null a nil.
type FieldWriter interface {
	Int(v int)
	Float(v float64)
	Text(s string)
	// TextBytes is Text(string(b)); b is not kept past the call.
	TextBytes(b []byte)
	Time(t time.Time)
	Null()
}

// ErrClass is what the driver does about a failed transaction.
type ErrClass int

const (
	// ErrOther is counted against the transaction type.
	ErrOther ErrClass = iota
	// ErrRetry (serialization failure, deadlock, busy) is retried.
	ErrRetry
	// ErrConnLost means the session is gone and must be reopened.
	ErrConnLost
	// ErrUserRollback is a rollback the workload asked for, not a failure.
	// A stored routine asks for one by raising the target's rollback
	// condition (on PostgreSQL, SQLSTATE 'DR001'); the workload counts it
	// as a completed transaction.
	ErrUserRollback
)

// String names the class as a result document counts errors by it.
func (c ErrClass) String() string {
	switch c {
	case ErrRetry:
		return "retry"
	case ErrConnLost:
		return "connection_lost"
	case ErrUserRollback:
		return "user_rollback"
	}
	return "other"
}

// SQLState returns the SQLSTATE code carried by err, or "". It is for the
// target packages: a workload asks Classify what an error means instead.
func SQLState(err error) string {
	var s interface{ SQLState() string }
	if errors.As(err, &s) {
		return s.SQLState()
	}
	return ""
}

// Opener opens a target from a URL the registry gave it. With create
// false, a target that would have to be created (an SQLite file that does
// not exist) is an error instead.
type Opener struct {
	Kind string
	// Prefixes are the URL schemes that name this kind ("sqlite:",
	// "postgres://"). Every kind's prefixes are tried before any Match, the
	// longest first, so a scheme always wins over a looser form.
	Prefixes []string
	// Match, if set, claims a URL that has none of the registered
	// prefixes, such as libpq's keyword/value DSN. Kinds' Match functions
	// are tried in the order of their names.
	Match func(url string) bool
	Open  func(ctx context.Context, url string, create bool) (Target, error)
	// Prewarms says that the kind's targets implement Prewarmer, so that
	// a spec asking for a warm cache is refused before anything runs.
	Prewarms bool
	// Redact removes the secrets from a URL this kind accepted.
	Redact func(url string) string
	// Endpoint, for a kind whose databases are on a server, says where
	// the server a URL names listens, without connecting.
	Endpoint func(url string) (Endpoint, error)
}

var openers []Opener

// Embedded says that kind is a registered kind of target with no server
// of its own (an SQLite file).
func Embedded(kind string) bool {
	return slices.ContainsFunc(openers, func(o Opener) bool { return o.Kind == kind && o.Endpoint == nil })
}

// Register adds a kind of target. Called from the target packages' init;
// a kind or a prefix registered twice panics.
func Register(o Opener) {
	for _, have := range openers {
		if have.Kind == o.Kind {
			panic("target: kind " + o.Kind + " registered twice")
		}
		for _, p := range o.Prefixes {
			if slices.Contains(have.Prefixes, p) {
				panic("target: prefix " + p + " registered by " + have.Kind + " and " + o.Kind)
			}
		}
	}
	openers = append(openers, o)
	slices.SortFunc(openers, func(a, b Opener) int { return strings.Compare(a.Kind, b.Kind) })
}

// lookup finds the opener for url: the longest registered prefix it starts
// with, else the first Match that claims it.
func lookup(url string) (Opener, bool) {
	best, found := Opener{}, false
	longest := 0
	for _, o := range openers {
		for _, p := range o.Prefixes {
			if len(p) > longest && strings.HasPrefix(url, p) {
				best, found, longest = o, true, len(p)
			}
		}
	}
	if found {
		return best, true
	}
	for _, o := range openers {
		if o.Match != nil && o.Match(url) {
			return o, true
		}
	}
	return Opener{}, false
}

// Open picks the target kind that accepts url and opens it, creating it
// if it has to (as a build does).
func Open(ctx context.Context, url string) (Target, error) {
	return open(ctx, url, true)
}

// OpenExisting opens a target that must already exist, so that a typing
// error in a path leaves nothing behind.
func OpenExisting(ctx context.Context, url string) (Target, error) {
	return open(ctx, url, false)
}

func open(ctx context.Context, url string, create bool) (Target, error) {
	if o, ok := lookup(url); ok {
		return o.Open(ctx, url, create)
	}
	kinds := make([]string, 0, len(openers))
	for _, o := range openers {
		kinds = append(kinds, o.Kind)
	}
	return nil, exitcode.Userf("target %q: not a URL dbrig knows (kinds: %s)", Redact(url), strings.Join(kinds, ", "))
}
