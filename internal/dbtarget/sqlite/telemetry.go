package sqlite

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/dbrig/dbrig/internal/telemetry"
)

var _ telemetry.Sourcer = (*Target)(nil)

// Telemetry: an embedded engine has no server views and no sessions of its
// own to sample; what it has is its file's size and its settings. It runs
// inside dbrig's process, so its CPU time is the client's.
func (t *Target) Telemetry(context.Context) (telemetry.Source, error) { return source{t}, nil }

type source struct{ t *Target }

func (s source) Counters(ctx context.Context) (map[string]float64, error) {
	n, err := s.t.Size(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]float64{telemetry.DatabaseBytes: float64(n)}, nil
}

func (s source) Tables(context.Context) ([]telemetry.Table, error) { return nil, nil }

func (s source) Sessions(context.Context) ([]telemetry.Session, error) {
	return nil, telemetry.ErrUnsupported
}

// Others: another process may open the same file and write to it, which
// the tables' own counts (a workload's database side) then count, but an
// embedded engine keeps no list of the connections to its file.
func (s source) Others(context.Context) ([]telemetry.Session, error) {
	return nil, errors.New("SQLite keeps no list of the processes that have its file open")
}

// pragmas are the settings that decide SQLite's durability and caching,
// as one of dbrig's connections has them.
var pragmas = []string{"journal_mode", "synchronous", "cache_size", "page_size", "mmap_size", "busy_timeout", "locking_mode", "temp_store"}

func (s source) Settings(ctx context.Context) (string, map[string]string, error) {
	version, err := s.t.Version(ctx)
	if err != nil {
		return "", nil, err
	}
	conn, err := s.t.db.SQL.Conn(ctx)
	if err != nil {
		return version, nil, err
	}
	defer conn.Close()
	settings := map[string]string{}
	for _, p := range pragmas {
		var v string
		if err := conn.QueryRowContext(ctx, "PRAGMA "+p).Scan(&v); err != nil {
			return version, settings, err
		}
		settings[p] = v
	}
	return version, settings, nil
}

// Local names the file; the engine runs in dbrig's process, whose CPU
// must not be counted twice.
func (s source) Local(context.Context) (int, string, error) {
	path, err := filepath.Abs(s.t.path)
	return telemetry.Embedded, path, err
}

func (s source) Close() error { return nil }
