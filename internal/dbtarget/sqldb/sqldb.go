// Package sqldb is what the targets reached through database/sql share:
// sessions that prepare each statement once per SQL text, rewrite the
// workload's $N placeholders for the driver, pass lists of integers as
// JSON arrays, and bulk-load with multi-row INSERTs. A target supplies the *sql.DB and its driver's conventions, and
// keeps for itself what only it knows (opening, error classes, counters).
package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// DB is a database/sql database and its driver's conventions.
type DB struct {
	SQL          *sql.DB
	Placeholders Placeholders
	// BeginWrite starts a transaction that will write, as Load's are.
	BeginWrite string
	// Class classifies the driver's own errors (busy, deadlock, the
	// intended rollback); Classify has already dealt with lost connections.
	// It must be set.
	Class func(error) dbtarget.ErrClass
	// Bulk, if set, loads rows on the session's connection the database's
	// own faster way, in place of multi-row INSERTs. It owns the
	// transactions it needs.
	Bulk func(ctx context.Context, c *sql.Conn, table string, columns []string, src dbtarget.RowSource) (int64, error)
	// MultiStatements makes the sessions Batchers that send a batch as one
	// text query (see batch.go). The driver must take several statements
	// in one query, interpolate the arguments of all of them and skip
	// the results of statements that return no rows.
	MultiStatements bool
	// BatchOpen and BatchClose, with MultiStatements, enclose a batch's
	// statements in one statement of the database's own, where that
	// spares the server a reply to flush for each statement (MariaDB's
	// BEGIN NOT ATOMIC ... END).
	BatchOpen, BatchClose string
	// BatchBegin, with BatchOpen, is what a batch's own BEGIN becomes
	// inside it, where the enclosing statement would read BEGIN as the
	// start of a block (MariaDB's START TRANSACTION).
	BatchBegin string
}

// Classify tells the driver what err means for the next attempt. A session
// whose connection database/sql has given up on is lost, whatever the
// driver; the rest is the driver's to say.
func (d *DB) Classify(err error) dbtarget.ErrClass {
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		return dbtarget.ErrConnLost
	}
	return d.Class(err)
}

// Session opens a dedicated connection.
func (d *DB) Session(ctx context.Context) (dbtarget.Session, error) {
	c, err := d.SQL.Conn(ctx)
	if err != nil {
		return nil, err
	}
	s := &session{db: d, c: c, stmts: map[string]*stmt{}}
	if d.MultiStatements {
		return &multiSession{session: s, natives: map[string]native{}}, nil
	}
	return s, nil
}

type session struct {
	db    *DB
	c     *sql.Conn
	stmts map[string]*stmt
}

// stmt is a workload statement prepared in the driver's form.
type stmt struct {
	st *sql.Stmt
	native
}

// native is a workload statement in the driver's form.
type native struct {
	text string
	// order is the workload argument each driver placeholder takes, or nil
	// if they pass as they are.
	order []int
	// takes is how many of the workload's arguments the statement reads:
	// one argument list may serve two statements, each reading what it
	// needs, and the driver refuses an argument its statement has no
	// place for.
	takes int
}

func newNative(q string, p Placeholders) native {
	text, order, takes := rewrite(q, p)
	return native{text: text, order: order, takes: takes}
}

// lay appends to dst the driver's arguments for the workload's args.
func (n *native) lay(dst []any, args []any) ([]any, error) {
	args = driverArgs(args)
	if n.order == nil {
		return append(dst, args[:min(len(args), n.takes)]...), nil
	}
	for _, i := range n.order {
		if i >= len(args) {
			return dst, fmt.Errorf("statement takes $%d, given %d arguments", i+1, len(args))
		}
		dst = append(dst, args[i])
	}
	return dst, nil
}

var _ dbtarget.Session = (*session)(nil)

func (s *session) stmt(ctx context.Context, q string, args []any) (*sql.Stmt, []any, error) {
	st, ok := s.stmts[q]
	if !ok {
		n := newNative(q, s.db.Placeholders)
		prepared, err := s.c.PrepareContext(ctx, n.text)
		if err != nil {
			return nil, nil, err
		}
		st = &stmt{st: prepared, native: n}
		s.stmts[q] = st
	}
	if st.order == nil {
		// The arguments pass as they are, without a copy.
		args = driverArgs(args)
		return st.st, args[:min(len(args), st.takes)], nil
	}
	laid, err := st.lay(nil, args)
	return st.st, laid, err
}

func (s *session) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	st, args, err := s.stmt(ctx, q, args)
	if err != nil {
		return 0, err
	}
	r, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (s *session) QueryRow(ctx context.Context, q string, args ...any) dbtarget.Row {
	st, args, err := s.stmt(ctx, q, args)
	if err != nil {
		return dbtarget.ErrRow{Err: err}
	}
	return st.QueryRowContext(ctx, args...)
}

type rows struct{ *sql.Rows }

func (r rows) Close() { r.Rows.Close() }

func (s *session) Query(ctx context.Context, q string, args ...any) (dbtarget.Rows, error) {
	st, args, err := s.stmt(ctx, q, args)
	if err != nil {
		return nil, err
	}
	r, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

// loadBatch rows go in one INSERT, and loadTx rows in one transaction:
// fewer statements and commits are what make a database/sql load fast.
const (
	loadBatch = 64
	loadTx    = 50000
)

// insert is an INSERT of rows rows into table, in workload placeholders
// like any other statement.
func insert(table string, columns []string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(columns, ",") + ") VALUES ")
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range columns {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString("$" + strconv.Itoa(r*len(columns)+c+1))
		}
		b.WriteByte(')')
	}
	return b.String()
}

func (s *session) Load(ctx context.Context, table string, columns []string, src dbtarget.RowSource) (int64, error) {
	if s.db.Bulk != nil {
		return s.db.Bulk(ctx, s.c, table, columns, src)
	}
	full := insert(table, columns, loadBatch)
	args := make([]any, 0, loadBatch*len(columns))
	var n, inTx int64
	open := false // a transaction is open, perhaps with no rows in it yet
	flush := func(q string) error {
		if len(args) == 0 {
			return nil
		}
		if !open {
			if _, err := s.c.ExecContext(ctx, s.db.BeginWrite); err != nil {
				return err
			}
			open = true
		}
		if _, err := s.Exec(ctx, q, args...); err != nil {
			return err
		}
		rows := int64(len(args) / len(columns))
		n += rows
		inTx += rows
		args = args[:0]
		if inTx >= loadTx {
			inTx, open = 0, false
			_, err := s.c.ExecContext(ctx, "COMMIT")
			return err
		}
		return nil
	}
	fail := func(err error) (int64, error) {
		if open {
			s.c.ExecContext(context.Background(), "ROLLBACK")
		}
		return n, fmt.Errorf("load %s: %w", table, err)
	}
	for src.Next() {
		vals, err := src.Values()
		if err != nil {
			return fail(err)
		}
		args = append(args, vals...)
		if len(args) == cap(args) {
			if err := flush(full); err != nil {
				return fail(err)
			}
		}
	}
	if err := src.Err(); err != nil {
		return fail(err)
	}
	if rest := len(args) / len(columns); rest > 0 {
		if err := flush(insert(table, columns, rest)); err != nil {
			return fail(err)
		}
	}
	if open {
		if _, err := s.c.ExecContext(ctx, "COMMIT"); err != nil {
			return fail(err)
		}
	}
	return n, nil
}

func (s *session) Close() error {
	for _, st := range s.stmts {
		st.st.Close()
	}
	return s.c.Close()
}
