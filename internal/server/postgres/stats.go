//go:build unix

package postgres

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// statementsLib is the extension that gives a run's telemetry its top
// statements, and the sessions their query ids (it turns compute_query_id
// on when left at auto).
const statementsLib = "pg_stat_statements"

// withStatsDefaults is settings plus what the managed server turns on so
// that a run's telemetry can say where time went: pg_stat_statements
// preloaded, and track_io_timing, which times every block read and write.
// Setting either explicitly turns it off: track_io_timing=off, or an empty
// shared_preload_libraries (any other list is kept and pg_stat_statements
// added to it). A list the cluster's own configuration
// files hold is kept the same way, since a -c setting would replace it.
// An installation without the library's file loads nothing.
func (s *Server) withStatsDefaults(ctx context.Context, settings map[string]string) map[string]string {
	out := maps.Clone(settings)
	if out == nil {
		out = map[string]string{}
	}
	if _, _, set := lookupSetting(settings, "track_io_timing"); !set {
		out["track_io_timing"] = "on"
	}
	name, libs, set := lookupSetting(settings, "shared_preload_libraries")
	if set && strings.TrimSpace(libs) == "" || !hasLibrary(s.Host.Bin, statementsLib) {
		return out
	}
	if !set {
		name, libs = "shared_preload_libraries", s.configured(ctx, "shared_preload_libraries")
	}
	out[name] = addLibrary(libs, statementsLib)
	return out
}

// lookupSetting finds a setting whatever its case, as PostgreSQL does.
func lookupSetting(settings map[string]string, name string) (key, value string, ok bool) {
	for k, v := range settings {
		if strings.EqualFold(k, name) {
			return k, v, true
		}
	}
	return "", "", false
}

// libraries splits a shared_preload_libraries value, whose entries may be
// quoted and spaced.
func libraries(list string) []string {
	var out []string
	for _, l := range strings.Split(list, ",") {
		if l = strings.Trim(strings.TrimSpace(l), `"`); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func addLibrary(list, lib string) string {
	libs := libraries(list)
	if !slices.Contains(libs, lib) {
		libs = append(libs, lib)
	}
	return strings.Join(libs, ",")
}

// configured is what the cluster's configuration files set name to, ""
// when they do not or postgres cannot say.
func (s *Server) configured(ctx context.Context, name string) string {
	out, err := s.Command(ctx, "postgres", "-C", name, "-D", s.DataDir()).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// hasLibrary looks for lib in the installation's library directory:
// pg_config's, else the bin directory's sibling lib, where both Debian
// (/usr/lib/postgresql/15/lib) and a relocatable build keep it.
func hasLibrary(binDir, lib string) bool {
	dir := filepath.Join(binDir, "..", "lib")
	if out, err := exec.Command(filepath.Join(binDir, "pg_config"), "--pkglibdir").Output(); err == nil {
		dir = strings.TrimSpace(string(out))
	}
	for _, suffix := range []string{".so", ".dylib"} {
		if _, err := os.Stat(filepath.Join(dir, lib+suffix)); err == nil {
			return true
		}
	}
	return false
}

// createStatements installs pg_stat_statements in database db when the
// server preloads it, so that its view is there for telemetry to read.
func (s *Server) createStatements(ctx context.Context, db string) error {
	conn, err := pgx.Connect(ctx, s.URLFor(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var libs string
	if err := conn.QueryRow(ctx, "SHOW shared_preload_libraries").Scan(&libs); err != nil {
		return err
	}
	if !slices.Contains(libraries(libs), statementsLib) {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+statementsLib)
	return err
}
