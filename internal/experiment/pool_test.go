package experiment_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/experiment"
)

// TestSweepRefusesPoolFirst: a sweep whose later point pools the
// sessions (connections) of a workload whose virtual users cannot share
// them (dvd-reports, on a SQLite store the sweep builds) is refused
// before its first run, naming that point, not when it gets there.
func TestSweepRefusesPoolFirst(t *testing.T) {
	dir := t.TempDir()
	spec := "name: x\ntarget: {url: 'sqlite:" + filepath.Join(dir, "d.db") + "'}\nworkload: dvd-reports\nbuild: {size: 2MB}\n" +
		"run: {rampup: 0s, duration: 1s, vus: 4}\nvary: {connections: [0, 2]}\n"
	s, err := experiment.Parse("s.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	sw := experiment.New(s, filepath.Join(dir, "sweep"))
	err = sw.Run(context.Background(), experiment.Options{DropCaches: func() error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "point 2 (connections=2): --connections: this workload's virtual users cannot share sessions") {
		t.Fatalf("sweep: %v, want point 2 refused", err)
	}
	if sw.Doc.Done != 0 {
		t.Errorf("%d runs done before the refusal, want none", sw.Doc.Done)
	}
	if runs, _ := os.ReadDir(filepath.Join(dir, "sweep", "runs")); len(runs) > 0 {
		t.Errorf("runs written before the refusal: %v", runs)
	}
}
