package cli_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
)

// TestCPUSQLiteCommands: `dbrig run cpu` with no flags runs the study's
// loop on the embedded default and prints the checked result; the commands
// the CPU test has no use for say so in one line.
func TestCPUSQLiteCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := mustRunIn(t, dir, "run", "cpu", "--json", "cpu.json")
	wantIn(t, "stdout", o.stdout, "Result 873729.72 in all 1 loops")
	wantIn(t, "stdout", o.stdout, "seconds per loop")
	doc, err := result.Read(filepath.Join(dir, "cpu.json"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Workload != "cpu" || doc.PrimaryMetric != "seconds_per_loop" || doc.Target.Kind != "sqlite" {
		t.Errorf("document: workload %q, primary %q, target %q", doc.Workload, doc.PrimaryMetric, doc.Target.Kind)
	}

	// Nothing to build, so a new SQLite file is fine; --loops other than
	// the study's is checked against the native loop's own result.
	o = mustRun(t, "run", "cpu", "--target", "sqlite:"+filepath.Join(dir, "new.db"), "--loops", "1000", "--json", filepath.Join(dir, "small.json"))
	wantIn(t, "stdout", o.stdout, "1000 iterations")

	for _, c := range []struct{ args []string }{
		{[]string{"build", "cpu"}},
		{[]string{"check", "cpu"}},
		{[]string{"drop", "cpu"}},
	} {
		line := usageError(t, dbrigIn(t, dir, c.args...))
		wantIn(t, "stderr", line, "cpu has no")
	}
	wantIn(t, "stderr", usageError(t, dbrigIn(t, dir, "check", "cpu")), "cpu has no consistency check")
	// Refused before the default target is opened, in a directory without
	// one, so none is made.
	bad := t.TempDir()
	wantIn(t, "stderr", usageError(t, dbrigIn(t, bad, "run", "cpu", "--sessions", "0")), "--sessions")
	wantIn(t, "stderr", usageError(t, dbrigIn(t, bad, "run", "cpu", "--arith", "decimal")), "--arith")
	wantIn(t, "stderr", usageError(t, dbrigIn(t, bad, "run", "cpu", "--vus", "4")), "--vus")
	if _, err := os.Stat(filepath.Join(bad, "dbrig-data")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("refused runs left the default database's directory behind (%v)", err)
	}
}
