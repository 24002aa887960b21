package workload

import (
	"context"
	"io/fs"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// MetaReader reads, on s, what a workload's build recorded, with the
// workload's schema file q; it fails where the workload is not built.
type MetaReader[M any] func(ctx context.Context, t dbtarget.Target, s dbtarget.Session, q SQLFile) (M, error)

// Built is a session on a built workload: what its build recorded, read
// on it, and the schema file that read it. Close closes the session.
type Built[M any] struct {
	Conn
	Schema SQLFile
	Meta   M
}

// OpenBuilt opens a session on t and reads on it what the build of the
// workload whose SQL is fsys recorded, so that a workload not built there
// fails before anything looks at its tables. Nothing stays open when it
// fails.
func OpenBuilt[M any](ctx context.Context, t dbtarget.Target, fsys fs.FS, read MetaReader[M]) (*Built[M], error) {
	q, err := LoadSQL(fsys, "sql", t.Dialect(), "schema.sql")
	if err != nil {
		return nil, err
	}
	s, err := t.Session(ctx)
	if err != nil {
		return nil, err
	}
	m, err := read(ctx, t, s, q)
	if err != nil {
		s.Close()
		return nil, err
	}
	return &Built[M]{Conn: Conn{T: t, S: s}, Schema: q, Meta: m}, nil
}

// Opened is what a run of a built workload opens with (OpenRun).
type Opened[M any] struct {
	// Built is the control session, which the run's marks are read on.
	*Built[M]
	// Mode is the implementation the run uses on the target (PickMode).
	Mode string
	// SQL is the run's statements.
	SQL SQLFile
}

// OpenRun opens a run of a built workload on t: it picks the run's mode
// (PickMode), loads its statements, the file of fsys's sql directory, and
// opens the control session, on which read reads what the build recorded.
// Nothing stays open when it fails.
func OpenRun[M any](ctx context.Context, t dbtarget.Target, fsys fs.FS, mode, file string, read MetaReader[M]) (*Opened[M], error) {
	mode, err := PickMode(mode, t)
	if err != nil {
		return nil, err
	}
	q, err := LoadSQL(fsys, "sql", t.Dialect(), file)
	if err != nil {
		return nil, err
	}
	b, err := OpenBuilt(ctx, t, fsys, read)
	if err != nil {
		return nil, err
	}
	return &Opened[M]{Built: b, Mode: mode, SQL: q}, nil
}
