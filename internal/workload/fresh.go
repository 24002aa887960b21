package workload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// Fresh is a build on a target cleared for it: what is in the way goes
// first, and what a failed build made goes after it.
type Fresh struct {
	// Name is the workload's.
	Name string
	// Force drops a schema already there instead of refusing.
	Force bool
	Drop  func(context.Context, dbtarget.Target) error
	// FS is the workload's embedded SQL (its "sql" directory).
	FS fs.FS
}

// Build reads the build's record on a session of t with read, which
// returns ErrNoSchema where there is none, nil for a finished schema (and
// says what it is), or another error for something in the way. Once the
// way is clear it runs build on that session, with the schema's SQL file,
// and times it. build makes the workload's tables and routines with Make,
// which lists each in dbrig_built before it is made, and Drop goes by that
// list. A failed build's partial schema is dropped, even when ctx is what
// failed, so no half-built schema is left behind; where that fails too (a
// full disk, a lost server), the list still names all of it, so `drop` and
// `build --force` clear it later.
func (f Fresh) Build(ctx context.Context, t dbtarget.Target,
	read func(s dbtarget.Session, schema SQLFile) (have string, err error),
	build func(s dbtarget.Session, schema SQLFile) (BuildSummary, error)) (BuildSummary, error) {
	began := time.Now()
	q, err := LoadSQL(f.FS, "sql", t.Dialect(), "schema.sql")
	if err != nil {
		return BuildSummary{}, err
	}
	s, err := t.Session(ctx)
	if err != nil {
		return BuildSummary{}, err
	}
	defer s.Close()
	have, found := read(s, q)
	switch {
	case errors.Is(found, ErrNoSchema):
	case !f.Force && found == nil:
		return BuildSummary{}, exitcode.Userf("%s already exists on %s: use --force to drop and rebuild it, or `dbrig drop %s --target %s`", have, t.URL(), f.Name, t.URL())
	case !f.Force:
		return BuildSummary{}, found
	default:
		if err := f.Drop(ctx, t); err != nil {
			return BuildSummary{}, err
		}
	}
	sum, err := build(s, q)
	if err != nil {
		if derr := f.Drop(context.WithoutCancel(ctx), t); derr != nil {
			err = fmt.Errorf("%w (and dropping the partial schema failed too: %v; `dbrig drop %s --target %s` drops it once the database can take writes again)",
				err, derr, f.Name, t.URL())
		}
		return sum, err
	}
	sum.Seconds = time.Since(began).Seconds()
	return sum, nil
}

// Tables builds a schema as its SQL files describe it: the schema file's
// "tables" statements, the load, with each table's "keys" (and its
// "analyze_table", where the dialect has one) as soon as the table is
// loaded, on the loaders' sessions (LoadThen), the routines of the procs
// file ("proc:" blocks) where the target has them, the "sequences" where
// the dialect has any, "analyze" unless each table had its own; then it
// records the build with "meta_write" and
// record, and measures the schema with "size". The tables and routines
// are in dbrig_built before they are made (Make; Name is the workload's),
// so that even a build killed while it makes them can be dropped.
type Tables struct {
	Name     string
	FS       fs.FS
	Loaders  int
	Jobs     []LoadJob
	Record   []any
	Progress func(done, total int64, what string)
}

// Build runs the steps on s, the build's session, with the schema file q,
// and times each step into the summary's Phases and a note.
func (b Tables) Build(ctx context.Context, t dbtarget.Target, s dbtarget.Session, q SQLFile) (BuildSummary, error) {
	var sum BuildSummary
	progress := b.Progress
	if progress == nil {
		progress = func(int64, int64, string) {}
	}
	exec := func(what string, stmts []string) error {
		for _, stmt := range stmts {
			if _, err := s.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		return nil
	}
	last := time.Now()
	lap := func(name string) {
		now := time.Now()
		sum.Phases = append(sum.Phases, Phase{Name: name, Seconds: now.Sub(last).Seconds()})
		last = now
	}
	if err := b.make(ctx, t, s, "create tables", q.Statements("tables")); err != nil {
		return sum, err
	}
	lap("tables")
	then, keys := b.followUps(q)
	rows, err := LoadThen(ctx, t, b.Loaders, b.Jobs, then, "loading", progress)
	sum.Rows = rows
	if err != nil {
		return sum, err
	}
	lap("load")
	progress(rows, rows, "keys")
	if err := b.keys(ctx, t, keys); err != nil {
		return sum, err
	}
	lap("keys")
	if err := b.routines(ctx, t, s); err != nil {
		return sum, err
	}
	if _, ok := q["sequences"]; ok {
		if err := exec("sequences", q.Statements("sequences")); err != nil {
			return sum, err
		}
	}
	lap("routines")
	if _, each := q["analyze_table"]; !each {
		progress(rows, rows, "analyze")
		if err := exec("analyze", []string{q.Get("analyze")}); err != nil {
			return sum, err
		}
	}
	lap("analyze")
	if _, err := s.Exec(ctx, q.Get("meta_write"), b.Record...); err != nil {
		return sum, fmt.Errorf("record build: %w", err)
	}
	if err := s.QueryRow(ctx, q.Get("size")).Scan(&sum.Bytes); err != nil {
		return sum, fmt.Errorf("size: %w", err)
	}
	lap("record")
	sum.Notes = append(sum.Notes, phasesNote(sum.Phases))
	return sum, nil
}

// followUps are the tasks each loaded table needs before it is done, for
// LoadThen: its "keys" statements, in the file's order, then, where the
// schema has an "analyze_table" block, that statement for the table
// ({table} in it names the table); and the keys of no loaded table,
// which run after the load.
func (b Tables) followUps(q SQLFile) (then map[string][]Task, rest []string) {
	var tables []string
	for _, j := range b.Jobs {
		if !slices.Contains(tables, j.Table) {
			tables = append(tables, j.Table)
		}
	}
	then = map[string][]Task{}
	for _, stmt := range q.Statements("keys") {
		table := keyTable(stmt, tables)
		if table == "" {
			rest = append(rest, stmt)
			continue
		}
		then[table] = append(then[table], func(ctx context.Context, s dbtarget.Session) error {
			if _, err := s.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("keys: %w", err)
			}
			return nil
		})
	}
	if _, ok := q["analyze_table"]; ok {
		for _, table := range tables {
			stmt := strings.ReplaceAll(q.Get("analyze_table"), "{table}", table)
			then[table] = append(then[table], func(ctx context.Context, s dbtarget.Session) error {
				if _, err := s.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("analyze %s: %w", table, err)
				}
				return nil
			})
		}
	}
	return then, rest
}

// keyTable is the table of tables a key statement is on: the name after
// its first TABLE or ON (ALTER TABLE t ADD ..., CREATE INDEX i ON t ...),
// "" if that is none of them.
func keyTable(stmt string, tables []string) string {
	words := sqlWords(stmt)
	for i, w := range words[:max(len(words)-1, 0)] {
		if strings.EqualFold(w, "TABLE") || strings.EqualFold(w, "ON") {
			if slices.Contains(tables, words[i+1]) {
				return words[i+1]
			}
			return ""
		}
	}
	return ""
}

// sqlWords are a statement's words: its names and keywords, split at
// anything else.
func sqlWords(stmt string) []string {
	return strings.FieldsFunc(stmt, func(r rune) bool {
		return !(r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}

// keys runs key statements, each on a session of its own over the
// loaders where the target writes in parallel.
func (b Tables) keys(ctx context.Context, t dbtarget.Target, stmts []string) error {
	var ddl []Task
	for _, stmt := range stmts {
		ddl = append(ddl, Exec(stmt))
	}
	loaders := b.Loaders
	if !t.ParallelWrites() {
		loaders = 1
	}
	if err := Parallel(ctx, t, loaders, ddl); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	return nil
}

// routines creates the procs file's routines, where the target has them.
func (b Tables) routines(ctx context.Context, t dbtarget.Target, s dbtarget.Session) error {
	if !t.HasRoutines() {
		return nil
	}
	procs, err := LoadSQL(b.FS, "sql", t.Dialect(), "procs.sql")
	if err != nil {
		return err
	}
	for _, name := range procs.Named("proc:") {
		if err := b.make(ctx, t, s, "create "+name, []string{procs.Get(name)}); err != nil {
			return err
		}
	}
	return nil
}

// make runs stmts, each the creation of one of the schema's tables or
// routines, on s with Make; what names the step in errors.
func (b Tables) make(ctx context.Context, t dbtarget.Target, s dbtarget.Session, what string, stmts []string) error {
	for _, stmt := range stmts {
		if err := Make(ctx, t, s, b.Name, stmt); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// phasesNote is the build's line of its phases, which bench/ reads:
// "Phases: load 2.9 s, keys 0.9 s, ...".
func phasesNote(phases []Phase) string {
	parts := make([]string, len(phases))
	for i, p := range phases {
		parts[i] = fmt.Sprintf("%s %.2f s", p.Name, p.Seconds)
	}
	return "Phases: " + strings.Join(parts, ", ")
}
