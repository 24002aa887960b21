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
		// A build stopped before it made its record's table: what is
		// here is still its own if the build record lists all of it.
		_, foreign, err := claimed(ctx, t, s, rc.Name, present)
		switch {
		case err != nil:
			return fmt.Errorf("read what dbrig built: %w", err)
		case len(foreign) == 0:
			return exitcode.Userf("the %s schema on %s was never finished (%s was never made): %s", rc.Name, t.URL(), rc.Table, rebuild)
		}
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
	present, err := ReadNames(ctx, s, q.Get("present"))
	slices.Sort(present)
	return present, err
}

// ReadNames reads the one column of names a query returns.
func ReadNames(ctx context.Context, s dbtarget.Session, query string, args ...any) ([]string, error) {
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

// exists is whether the record's table is here.
func (b built) exists() (bool, error) {
	var n int
	err := b.s.QueryRow(b.ctx, b.q.Get("exists")).Scan(&n)
	return n > 0, err
}

// list is what the record says the workload's builds made here.
func (b built) list() ([]string, error) {
	if ok, err := b.exists(); !ok || err != nil {
		return nil, err
	}
	return ReadNames(b.ctx, b.s, b.q.Get("list"), b.name)
}

// add records name, unless the record lists it already.
func (b built) add(name string) error {
	have, err := b.list()
	if err != nil || slices.Contains(have, name) {
		return err
	}
	if _, err := b.s.Exec(b.ctx, b.q.Get("create")); err != nil {
		return err
	}
	_, err = b.s.Exec(b.ctx, b.q.Get("add"), b.name, name)
	return err
}

// forget removes the workload's rows, and the record's table once no
// workload has any left (or none ever had: a build that made the table
// and could not write its first row).
func (b built) forget() error {
	if ok, err := b.exists(); !ok || err != nil {
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

// Make runs stmt on s, a build's statement that creates one of the
// workload's tables or routines (name: the workload's), once dbrig_built
// lists what it creates as the build's (madeName; a statement that names
// nothing it creates just runs). The record comes first, and is committed
// first, so that whatever stops a build (a full disk, a lost server, a
// kill) leaves nothing of it that the record does not list, and `drop`
// and `build --force` clear all of it: a name listed whose table was
// never made costs nothing, as they drop only what is there. Until the
// build writes its own record's row (the schema file's "meta_write"), the
// list is that of a build in progress, which Read calls never finished.
func Make(ctx context.Context, t dbtarget.Target, s dbtarget.Session, name, stmt string) error {
	if made := madeName(stmt); made != "" {
		b, err := openBuilt(ctx, t, s, name)
		if err == nil {
			err = b.add(made)
		}
		if err != nil {
			return fmt.Errorf("record %s as the build's before making it: %w", made, err)
		}
	}
	_, err := s.Exec(ctx, stmt)
	return err
}

// madeName is what a CREATE statement of a table, function or procedure
// creates (the name after the kind, and after IF NOT EXISTS), or "".
func madeName(stmt string) string {
	words := sqlWords(stmt)
	if len(words) < 3 || !strings.EqualFold(words[0], "CREATE") {
		return ""
	}
	for i, w := range words[1 : len(words)-1] {
		switch strings.ToUpper(w) {
		case "OR", "REPLACE", "UNLOGGED":
			continue
		case "TABLE", "FUNCTION", "PROCEDURE":
			rest := words[i+2:]
			if len(rest) > 3 && strings.EqualFold(rest[0], "IF") && strings.EqualFold(rest[1], "NOT") && strings.EqualFold(rest[2], "EXISTS") {
				rest = rest[3:]
			}
			return rest[0]
		}
		return ""
	}
	return ""
}

// claimed splits present, the tables (and routines) of the workload's
// names on t, into those dbrig_built lists as the builds' of workload
// name (made) and the others (foreign).
func claimed(ctx context.Context, t dbtarget.Target, s dbtarget.Session, name string, present []string) (made, foreign []string, err error) {
	b, err := openBuilt(ctx, t, s, name)
	if err != nil {
		return nil, nil, err
	}
	if made, err = b.list(); err != nil {
		return nil, nil, err
	}
	for _, n := range present {
		if !slices.Contains(made, n) {
			foreign = append(foreign, n)
		}
	}
	return made, foreign, nil
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
	present, err := Present(ctx, s, q)
	if err != nil {
		return fmt.Errorf("look for the %s tables: %w", rc.Name, err)
	}
	made, foreign, err := claimed(ctx, t, s, rc.Name, present)
	if err != nil {
		return fmt.Errorf("read what dbrig built: %w", err)
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
	b, err := openBuilt(ctx, t, s, rc.Name)
	if err != nil {
		return err
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
