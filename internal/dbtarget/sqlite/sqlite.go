// Package sqlite is the embedded target: the real C SQLite through
// mattn/go-sqlite3 (or, where no C compiler built dbrig, modernc's
// translation of the same C code), in WAL mode, with a busy timeout so
// virtual users queue for the single writer instead of failing.
package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/sqldb"
	"github.com/dbrig/dbrig/internal/exitcode"
)

func init() {
	dbtarget.Register(dbtarget.Opener{Kind: "sqlite", Prefixes: []string{Prefix}, Open: OpenURL,
		// A path holds no secret.
		Redact: func(url string) string { return url }})
}

// Prefix starts every SQLite target URL: sqlite:PATH.
const Prefix = "sqlite:"

// Dialect is SQLite's SQL, which no other dialect refines.
var Dialect = dbtarget.Dialect{Name: "sqlite"}

var _ dbtarget.Target = (*Target)(nil)

// Target is an opened SQLite file.
type Target struct {
	db   sqldb.DB
	path string
}

// OpenURL opens the file named by url, creating it only when create is
// set, and never a directory: a typing error in a path must create
// nothing. synchronous stays at SQLite's durable default; dbrig does not
// trade durability for speed.
func OpenURL(ctx context.Context, url string, create bool) (dbtarget.Target, error) {
	path := strings.TrimPrefix(url, Prefix)
	if path == "" {
		return nil, exitcode.Userf("target %q: give a file, as sqlite:PATH", url)
	}
	if _, err := os.Stat(path); err != nil && !create {
		return nil, exitcode.Userf("target %s: no such file (a build creates it)", url)
	}
	if dir := filepath.Dir(path); create {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, exitcode.Userf("target %s: no directory %s: dbrig creates the database's file, not the directories to it", url, dir)
		}
	}
	db, err := sql.Open(driverName, dsn(path))
	if err != nil {
		return nil, exitcode.Userf("target %s: %v", url, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, exitcode.Userf("target %s: %v", url, err)
	}
	// Writers take the write lock up front: a deferred transaction that
	// has to upgrade its read lock midway can only be refused, not queued.
	return &Target{path: path, db: sqldb.DB{SQL: db, Placeholders: sqldb.Numbered, BeginWrite: "BEGIN IMMEDIATE", Class: classify}}, nil
}

func (t *Target) Kind() string              { return "sqlite" }
func (t *Target) Dialect() dbtarget.Dialect { return Dialect }
func (t *Target) URL() string               { return Prefix + t.path }
func (t *Target) ParallelWrites() bool      { return false }
func (t *Target) HasRoutines() bool         { return false }

func (t *Target) Version(ctx context.Context) (string, error) {
	var v string
	err := t.db.SQL.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v)
	return v, err
}

func (t *Target) Size(ctx context.Context) (int64, error) {
	var n int64
	err := t.db.SQL.QueryRowContext(ctx, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&n)
	return n, err
}

// Xacts: SQLite keeps no transaction counter.
func (t *Target) Xacts(context.Context) (int64, bool, error) { return 0, false, nil }

func (t *Target) Session(ctx context.Context) (dbtarget.Session, error) { return t.db.Session(ctx) }

func (t *Target) Close() error { return t.db.SQL.Close() }

func (t *Target) Classify(err error) dbtarget.ErrClass { return t.db.Classify(err) }

// classify: a busy or locked database is retried.
func classify(err error) dbtarget.ErrClass {
	if busy(err) {
		return dbtarget.ErrRetry
	}
	return dbtarget.ErrOther
}
