package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/dbrig/dbrig/internal/target"
)

// Record is how a workload finds what its build recorded in its own
// table: the SQL file's "exists" block counts the workload's tables and
// the record's table, and "meta_read" reads the record into Scan's
// destinations, the first of which is the schema's layout.
type Record struct {
	Name, Table string
	Layout      int
}

// Read reads the record, telling a missing schema (ErrNoSchema) from one
// that is there but not dbrig's, never finished, or of another layout.
func (rc Record) Read(ctx context.Context, t target.Target, s target.Session, q SQLFile, dest ...any) error {
	var tables, records int
	if err := s.QueryRow(ctx, q.Get("exists")).Scan(&tables, &records); err != nil {
		return fmt.Errorf("look for the %s tables: %w", rc.Name, err)
	}
	rebuild := fmt.Sprintf("rebuild with `dbrig build %s --target %s --force`", rc.Name, t.URL())
	switch {
	case tables == 0 && records == 0:
		return ErrNoSchema
	case records == 0:
		return target.Userf("found %s tables that dbrig did not build (no %s table): drop them, or %s", rc.Name, rc.Table, rebuild)
	}
	var layout int
	err := s.QueryRow(ctx, q.Get("meta_read")).Scan(append([]any{&layout}, dest...)...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return target.Userf("the %s schema on %s was never finished (%s is empty): %s", rc.Name, t.URL(), rc.Table, rebuild)
	case err != nil:
		return target.Userf("read %s on %s: %v", rc.Table, t.URL(), err)
	case layout != rc.Layout:
		return target.Userf("the %s schema was built with layout %d; this dbrig uses layout %d: %s", rc.Name, layout, rc.Layout, rebuild)
	}
	return nil
}

// DropStatements runs the statements of a SQL file's "drop" block on a
// session of t.
func DropStatements(ctx context.Context, t target.Target, q SQLFile) error {
	s, err := t.Session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, stmt := range q.Statements("drop") {
		if _, err := s.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("drop: %w", err)
		}
	}
	return nil
}
