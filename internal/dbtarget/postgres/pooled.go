package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/jackc/pgx/v5"
)

// execModes are the values pgx takes for the URL's
// default_query_exec_mode.
const execModes = "cache_statement (the default), cache_describe, describe_exec, exec, simple_protocol"

// SQLSTATEs of a prepared statement a connection does not have, and of
// one it has already.
const (
	undefinedStatement = "26000"
	duplicateStatement = "42P05"
)

// pooled says what to do about err where it is what a pooler in
// transaction mode (pgbouncer before 1.21, or without
// max_prepared_statements) does to prepared statements: it runs each
// transaction on whichever server connection is free, so a statement is
// missing on the connection that runs it, or, prepared by another client
// under the same name, already there. Those are the sessions' statements
// by name, pgx's own in its statement cache (the harness's queries, in
// the default mode), or describe_exec's unnamed one. The error is one the
// user fixes (exit 2), and its cause is still the server's, classified as
// before.
func (t *Target) pooled(err error) error {
	if err == nil {
		return nil
	}
	if code := dbtarget.SQLState(err); code != undefinedStatement && code != duplicateStatement {
		return err
	}
	switch t.cfg.DefaultQueryExecMode {
	case pgx.QueryExecModeCacheStatement:
		return poolerError{err, "prepared statements do not follow a session through a pooler in transaction mode, which lends " +
			"each transaction whichever server connection is free: add default_query_exec_mode=exec to the URL " +
			"(or use pgbouncer 1.21 or later with max_prepared_statements)"}
	case pgx.QueryExecModeDescribeExec:
		return poolerError{err, "default_query_exec_mode=describe_exec describes a statement and runs it in two " +
			"round trips, which a pooler in transaction mode may send to two server connections: use exec"}
	}
	return err
}

// poolerError is the server's error about a prepared statement, and what
// to do about it.
type poolerError struct {
	err error
	do  string
}

func (e poolerError) Error() string { return e.err.Error() + ": " + e.do }

func (e poolerError) Unwrap() []error {
	return []error{e.err, &exitcode.UserError{Msg: e.Error()}}
}

// row is a QueryRow's result, whose error says what pooled says.
type row struct {
	pgx.Row
	s *session
}

func (r *row) Scan(dest ...any) error { return r.s.t.pooled(r.s.w.why(r.Row.Scan(dest...))) }

// rows is a Query's result, whose error says what pooled says.
type rows struct {
	pgx.Rows
	s *session
}

func (r *rows) Err() error { return r.s.t.pooled(r.s.w.why(r.Rows.Err())) }

// meetWait is how long the sessions' flushes behind a pooler wait for one
// another at an edge: a session that does not flush there (stuck in a
// transaction, or opened for something else) does not hold the rest
// longer. A meeting that waited that long most likely had every server
// connection the pooler lends, the rest of the sessions waiting for one
// of them: their flushes, for meetWait after, go on without a meeting,
// or an edge of 4,000 sessions over 100 server connections would take 40.
const meetWait = time.Second

// pooledFlush is Flush behind a pooler. A flush publishes the statistics
// of the server connection it runs on, and a pooler in transaction mode
// runs it on whichever is free: several sessions' flushes may land on one
// server connection, and another, idle, keeps the transactions it ran
// last unpublished for up to 10 s (PostgreSQL 15's idle interval), out of
// the database's count at the edge. So each session flushes inside a
// transaction it holds open until every open session's flush has met
// there, which keeps them on as many distinct server connections as the
// pooler uses for them. BEGIN, the flush and COMMIT are one transaction,
// the one Flush counts.
func (s *session) pooledFlush(ctx context.Context) error {
	if s.t.flushSQL == "" {
		return nil
	}
	if _, err := s.c.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	err := s.t.flush(ctx, s.c)
	if err == nil {
		s.t.edge.meet(ctx)
	}
	_, end := s.c.Exec(ctx, "COMMIT")
	return errors.Join(err, end)
}

// meeting gathers the flushes of the sessions open at an edge.
type meeting struct {
	mu sync.Mutex
	// live counts the sessions open, here the flushes that have met.
	live, here int
	// met closes when the meeting in progress is complete, or has waited
	// meetWait; nil between meetings.
	met chan struct{}
	// late is when the last meeting that waited meetWait ended.
	late time.Time
}

// open counts n sessions more open (less, negative), which may complete
// the meeting in progress.
func (m *meeting) open(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live += n
	m.complete(m.met, false)
}

// meet waits until the flushes of every open session have met, or
// meetWait has passed since the first came; not at all within meetWait
// of a meeting that waited that long.
func (m *meeting) meet(ctx context.Context) {
	m.mu.Lock()
	if m.met == nil && time.Since(m.late) < meetWait {
		m.mu.Unlock()
		return
	}
	if m.met == nil {
		met := make(chan struct{})
		m.met = met
		time.AfterFunc(meetWait, func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.complete(met, true)
		})
	}
	met := m.met
	m.here++
	m.complete(met, false)
	m.mu.Unlock()
	select {
	case <-met:
	case <-ctx.Done():
	}
}

// complete ends meeting met, if it is still the one in progress, when
// every open session is there or when late.
func (m *meeting) complete(met chan struct{}, late bool) {
	if met == nil || met != m.met || !late && m.here < m.live {
		return
	}
	close(met)
	m.met, m.here = nil, 0
	if late {
		m.late = time.Now()
	}
}
