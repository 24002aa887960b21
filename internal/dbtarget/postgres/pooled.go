package postgres

import (
	"fmt"

	"github.com/dbrig/dbrig/internal/dbtarget"
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
// under the same name, already there. The server's error stays err's
// cause, classified as before.
func (s *session) pooled(err error) error {
	if err == nil {
		return nil
	}
	if code := dbtarget.SQLState(err); code != undefinedStatement && code != duplicateStatement {
		return err
	}
	switch {
	case s.t.named:
		return fmt.Errorf("%w: dbrig prepares its statements on each session, and a pooler in transaction mode "+
			"runs them on other server connections: add default_query_exec_mode=exec to the URL "+
			"(or use pgbouncer 1.21 or later with max_prepared_statements)", err)
	case s.t.cfg.DefaultQueryExecMode == pgx.QueryExecModeDescribeExec:
		return fmt.Errorf("%w: default_query_exec_mode=describe_exec describes a statement and runs it in two "+
			"round trips, which a pooler in transaction mode may send to two server connections: use exec", err)
	}
	return err
}

// row is a QueryRow's result, whose error says what pooled says.
type row struct {
	pgx.Row
	s *session
}

func (r *row) Scan(dest ...any) error { return r.s.pooled(r.Row.Scan(dest...)) }

// rows is a Query's result, whose error says what pooled says.
type rows struct {
	pgx.Rows
	s *session
}

func (r *rows) Err() error { return r.s.pooled(r.Rows.Err()) }
