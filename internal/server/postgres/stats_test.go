//go:build unix

package postgres

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAddLibrary(t *testing.T) {
	cases := []struct{ list, want string }{
		{"", "pg_stat_statements"},
		{"pg_prewarm", "pg_prewarm,pg_stat_statements"},
		{` "pg_prewarm" , auto_explain `, "pg_prewarm,auto_explain,pg_stat_statements"},
		{"pg_stat_statements,pg_prewarm", "pg_stat_statements,pg_prewarm"},
	}
	for _, c := range cases {
		if got := addLibrary(c.list, statementsLib); got != c.want {
			t.Errorf("addLibrary(%q) = %q, want %q", c.list, got, c.want)
		}
	}
}

// TestHasLibrary: without pg_config, the library is looked for beside the
// bin directory, where a relocatable build keeps it.
func TestHasLibrary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	if hasLibrary(bin, statementsLib) {
		t.Errorf("found %s in an empty lib directory", statementsLib)
	}
	os.WriteFile(filepath.Join(dir, "lib", statementsLib+".so"), nil, 0o644)
	if !hasLibrary(bin, statementsLib) {
		t.Errorf("did not find %s in %s/lib", statementsLib, dir)
	}
}

// TestStatsDefaults: the managed server loads pg_stat_statements, keeping
// the libraries a user set on the command line or in the cluster's files,
// turns track_io_timing on and installs the extension in the databases it
// creates; explicit settings turn both off.
func TestStatsDefaults(t *testing.T) {
	bin := requireServerBins(t)
	if !hasLibrary(bin, statementsLib) {
		t.Skipf("%s has no %s", bin, statementsLib)
	}
	s := newTestServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	restart := func(settings map[string]string) {
		t.Helper()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx, settings); err != nil {
			t.Fatal(err)
		}
	}
	check := func(db, libs, ioTiming, installed string) {
		t.Helper()
		if err := s.CreateDB(ctx, db); err != nil {
			t.Fatal(err)
		}
		url := s.URLFor(db)
		got := [3]string{
			queryString(t, url, "SHOW shared_preload_libraries"),
			queryString(t, url, "SHOW track_io_timing"),
			queryString(t, url, "SELECT count(*)::text FROM pg_extension WHERE extname = 'pg_stat_statements'"),
		}
		if want := [3]string{libs, ioTiming, installed}; got != want {
			t.Errorf("libraries, track_io_timing, extensions installed = %q, want %q", got, want)
		}
		if st := s.Settings(); st["shared_preload_libraries"] != libs && libs != "" || st["track_io_timing"] != ioTiming {
			t.Errorf("the server records %v, not what it runs with", st)
		}
	}

	restart(map[string]string{"shared_preload_libraries": "pg_prewarm"})
	check("a", "pg_prewarm,pg_stat_statements", "on", "1")

	if err := s.admin(ctx, "ALTER SYSTEM SET shared_preload_libraries = 'auto_explain'"); err != nil {
		t.Fatal(err)
	}
	restart(nil)
	check("b", "auto_explain,pg_stat_statements", "on", "1")

	restart(map[string]string{"shared_preload_libraries": "", "track_io_timing": "off"})
	check("c", "", "off", "0")
	// A database made before keeps its extension, which now cannot be read.
	check("a", "", "off", "1")
}
