// Package sqlite is the embedded target: the real C SQLite through
// mattn/go-sqlite3 (or, where no C compiler built dbrig, modernc's
// translation of the same C code), in WAL mode, with a busy timeout so
// virtual users queue for the single writer instead of failing.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbrig/dbrig/internal/target"
)

func init() {
	target.Register(target.Opener{Kind: "sqlite", Prefixes: []string{Prefix}, Open: OpenURL,
		// A path holds no secret.
		Redact: func(url string) string { return url }})
}

// Prefix starts every SQLite target URL: sqlite:PATH.
const Prefix = "sqlite:"

// Dialect is SQLite's SQL, which no other dialect refines.
var Dialect = target.Dialect{Name: "sqlite"}

var _ target.Target = (*Target)(nil)

// Target is an opened SQLite file.
type Target struct {
	db   *sql.DB
	path string
}

// OpenURL opens the file named by url, creating it (and its directory) only
// when create is set. synchronous stays at SQLite's durable default; dbrig
// does not trade durability for speed.
func OpenURL(ctx context.Context, url string, create bool) (target.Target, error) {
	path := strings.TrimPrefix(url, Prefix)
	if path == "" {
		return nil, target.Userf("target %q: give a file, as sqlite:PATH", url)
	}
	if _, err := os.Stat(path); err != nil && !create {
		return nil, target.Userf("target %s: no such file (a build creates it)", url)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, target.Userf("target %s: %v", url, err)
	}
	db, err := sql.Open(driverName, dsn(path))
	if err != nil {
		return nil, target.Userf("target %s: %v", url, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, target.Userf("target %s: %v", url, err)
	}
	return &Target{db: db, path: path}, nil
}

func (t *Target) Kind() string            { return "sqlite" }
func (t *Target) Dialect() target.Dialect { return Dialect }
func (t *Target) URL() string             { return Prefix + t.path }
func (t *Target) ParallelWrites() bool    { return false }
func (t *Target) HasRoutines() bool       { return false }

func (t *Target) Version(ctx context.Context) (string, error) {
	var v string
	err := t.db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v)
	return v, err
}

func (t *Target) Size(ctx context.Context) (int64, error) {
	var n int64
	err := t.db.QueryRowContext(ctx, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&n)
	return n, err
}

// Xacts: SQLite keeps no transaction counter.
func (t *Target) Xacts(context.Context) (int64, bool, error) { return 0, false, nil }

func (t *Target) Session(ctx context.Context) (target.Session, error) {
	c, err := t.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &session{c: c, stmts: map[string]*sql.Stmt{}}, nil
}

func (t *Target) Close() error { return t.db.Close() }

// Classify: a busy or locked database is retried; SQLite has no
// connection to lose.
func (t *Target) Classify(err error) target.ErrClass {
	if busy(err) {
		return target.ErrRetry
	}
	return target.ErrOther
}

type session struct {
	c     *sql.Conn
	stmts map[string]*sql.Stmt
}

func (s *session) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts[q]; ok {
		return st, nil
	}
	st, err := s.c.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.stmts[q] = st
	return st, nil
}

func (s *session) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return 0, err
	}
	r, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

func (s *session) QueryRow(ctx context.Context, q string, args ...any) target.Row {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

type rows struct{ *sql.Rows }

func (r rows) Close() { r.Rows.Close() }

func (s *session) Query(ctx context.Context, q string, args ...any) (target.Rows, error) {
	st, err := s.stmt(ctx, q)
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
// fewer statements and commits are what make SQLite load fast.
const (
	loadBatch = 64
	loadTx    = 50000
)

func (s *session) Load(ctx context.Context, table string, columns []string, src target.RowSource) (int64, error) {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(columns)), ",") + ")"
	head := "INSERT INTO " + table + " (" + strings.Join(columns, ",") + ") VALUES "
	full := head + strings.TrimSuffix(strings.Repeat(one+",", loadBatch), ",")
	args := make([]any, 0, loadBatch*len(columns))
	var n, inTx int64
	flush := func(q string) error {
		if len(args) == 0 {
			return nil
		}
		if inTx == 0 {
			if _, err := s.c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
				return err
			}
		}
		if _, err := s.Exec(ctx, q, args...); err != nil {
			return err
		}
		rows := int64(len(args) / len(columns))
		n += rows
		inTx += rows
		args = args[:0]
		if inTx >= loadTx {
			inTx = 0
			_, err := s.c.ExecContext(ctx, "COMMIT")
			return err
		}
		return nil
	}
	fail := func(err error) (int64, error) {
		if inTx > 0 {
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
		if err := flush(head + strings.TrimSuffix(strings.Repeat(one+",", rest), ",")); err != nil {
			return fail(err)
		}
	}
	if inTx > 0 {
		if _, err := s.c.ExecContext(ctx, "COMMIT"); err != nil {
			return fail(err)
		}
	}
	return n, nil
}

func (s *session) Close() error {
	for _, st := range s.stmts {
		st.Close()
	}
	return s.c.Close()
}
