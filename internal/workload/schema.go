package workload

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// Record is how a workload finds what its build recorded in its own
// table: the SQL file's "present" block lists the tables (and routines)
// of the workload's names that are on the target, its record's table
// among them, and "meta_read" reads the record into Scan's destinations,
// the first of which is the schema's layout.
type Record struct {
	Name, Table string
	Layout      int
}

// Read reads the record, telling a missing schema (ErrNoSchema) from one
// that is there but not dbrig's, never finished, or of another layout.
func (rc Record) Read(ctx context.Context, t dbtarget.Target, s dbtarget.Session, q SQLFile, dest ...any) error {
	present, err := Present(ctx, s, q)
	if err != nil {
		return fmt.Errorf("look for the %s tables: %w", rc.Name, err)
	}
	rebuild := fmt.Sprintf("rebuild with `dbrig build %s --target %s --force`", rc.Name, t.URL())
	switch {
	case len(present) == 0:
		return ErrNoSchema
	case !slices.Contains(present, rc.Table):
		return exitcode.Userf("%s on %s: not built by dbrig (no %s table): rename or drop %s yourself, or use another database",
			tables(present), t.URL(), rc.Table, them(present))
	}
	var layout int
	err = s.QueryRow(ctx, q.Get("meta_read")).Scan(append([]any{&layout}, dest...)...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return exitcode.Userf("the %s schema on %s was never finished (%s is empty): %s", rc.Name, t.URL(), rc.Table, rebuild)
	case err != nil:
		return exitcode.Userf("read %s on %s: %v", rc.Table, t.URL(), err)
	case layout != rc.Layout:
		return exitcode.Userf("the %s schema was built with layout %d; this dbrig uses layout %d: %s", rc.Name, layout, rc.Layout, rebuild)
	}
	return nil
}

// Present lists, sorted, the tables (and routines) of the workload's
// names on the target, as the schema file's "present" block finds them.
func Present(ctx context.Context, s dbtarget.Session, q SQLFile) ([]string, error) {
	present, err := names(ctx, s, q.Get("present"))
	slices.Sort(present)
	return present, err
}

// names reads the one column of names a query returns.
func names(ctx context.Context, s dbtarget.Session, query string, args ...any) ([]string, error) {
	rows, err := s.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// tables is "table NAME" or "tables A, B", for messages.
func tables(names []string) string {
	if len(names) == 1 {
		return "table " + names[0]
	}
	return "tables " + strings.Join(names, ", ")
}

// them is "it" or "them".
func them(names []string) string {
	if len(names) == 1 {
		return "it"
	}
	return "them"
}

//go:embed sql
var builtFiles embed.FS

// built is a session's view of dbrig_built, the record of what the
// workload's builds made on the database (sql/generic/built.sql).
type built struct {
	ctx  context.Context
	s    dbtarget.Session
	q    SQLFile
	name string
}

func openBuilt(ctx context.Context, t dbtarget.Target, s dbtarget.Session, name string) (built, error) {
	q, err := LoadSQL(builtFiles, "sql", t.Dialect(), "built.sql")
	return built{ctx, s, q, name}, err
}

// list is what the record says the workload's builds made here.
func (b built) list() ([]string, error) {
	var n int
	if err := b.s.QueryRow(b.ctx, b.q.Get("exists")).Scan(&n); err != nil || n == 0 {
		return nil, err
	}
	return names(b.ctx, b.s, b.q.Get("list"), b.name)
}

// add records the names in made that the record does not list yet.
func (b built) add(made []string) error {
	have, err := b.list()
	if err != nil {
		return err
	}
	if _, err := b.s.Exec(b.ctx, b.q.Get("create")); err != nil {
		return err
	}
	for _, n := range made {
		if !slices.Contains(have, n) {
			if _, err := b.s.Exec(b.ctx, b.q.Get("add"), b.name, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// forget removes the workload's rows, and the record's table once no
// workload has any left.
func (b built) forget() error {
	if n, err := b.list(); err != nil || n == nil {
		return err
	}
	if _, err := b.s.Exec(b.ctx, b.q.Get("forget"), b.name); err != nil {
		return err
	}
	var left int
	if err := b.s.QueryRow(b.ctx, b.q.Get("left")).Scan(&left); err != nil || left > 0 {
		return err
	}
	_, err := b.s.Exec(b.ctx, b.q.Get("drop"))
	return err
}

// RecordBuilt records, on s, what of the workload's names is on t now as
// made by its build (name: the workload's): a build starts only where
// none of them is, so whatever is there is the build's own.
func RecordBuilt(ctx context.Context, t dbtarget.Target, s dbtarget.Session, name string, q SQLFile) error {
	b, err := openBuilt(ctx, t, s, name)
	if err != nil {
		return err
	}
	present, err := Present(ctx, s, q)
	if err == nil {
		err = b.add(present)
	}
	if err != nil {
		return fmt.Errorf("record what the build made: %w", err)
	}
	return nil
}

// Drop drops the workload's schema with drop, on a session of t, and
// forgets its record; nil drop runs dropStatements. Only
// what the record lists goes: a table of the workload's names that dbrig
// did not build, or one a dbrig from before the record built, is refused
// in one line that names it, and nothing is dropped.
func (rc Record) Drop(ctx context.Context, t dbtarget.Target, q SQLFile, drop func(s dbtarget.Session) error) error {
	s, err := t.Session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	b, err := openBuilt(ctx, t, s, rc.Name)
	if err != nil {
		return err
	}
	present, err := Present(ctx, s, q)
	if err != nil {
		return fmt.Errorf("look for the %s tables: %w", rc.Name, err)
	}
	made, err := b.list()
	if err != nil {
		return fmt.Errorf("read what dbrig built: %w", err)
	}
	var foreign []string
	for _, n := range present {
		if !slices.Contains(made, n) {
			foreign = append(foreign, n)
		}
	}
	switch {
	case len(foreign) > 0 && len(made) == 0 && slices.Contains(present, rc.Table):
		return exitcode.Userf("the %s schema on %s was built by a dbrig from before builds recorded what they made, so dbrig drops none of it: check that %s are dbrig's and drop them yourself, then build again",
			rc.Name, t.URL(), tables(present))
	case len(foreign) > 0:
		return exitcode.Userf("%s on %s: not built by dbrig (dbrig's build record does not list %s), so nothing was dropped: rename or drop %s yourself, or use another database",
			tables(foreign), t.URL(), them(foreign), them(foreign))
	}
	if drop == nil {
		drop = func(s dbtarget.Session) error { return execAll(ctx, s, dropStatements(q, present)) }
	}
	if err := drop(s); err != nil {
		return fmt.Errorf("drop: %w", err)
	}
	return b.forget()
}

// dropStatements are the schema file's "drop" block, or, in a dialect
// whose tables drop alone and one at a time (no routines, nothing that
// cascades: SQLite's), a DROP TABLE of each table present, which are the
// record's by then.
func dropStatements(q SQLFile, present []string) []string {
	if _, ok := q["drop"]; ok {
		return q.Statements("drop")
	}
	stmts := make([]string, len(present))
	for i, n := range present {
		stmts[i] = "DROP TABLE IF EXISTS " + n
	}
	return stmts
}

// execAll runs stmts on s, one after the other.
func execAll(ctx context.Context, s dbtarget.Session, stmts []string) error {
	for _, stmt := range stmts {
		if _, err := s.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}
