package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckResultSQLite: dvd-reports' answers, kept in a run's document
// alone or beside dvd-store, pass `check --result` on the database they
// ran on; a total changed in the document is a FAIL naming its category
// (exit 1); a missing document, or one without the answers, is exit 2;
// a workload that keeps no answers has no --result.
func TestCheckResultSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := "sqlite:" + filepath.Join(dir, "d.db")
	mustRun(t, "build", "dvd-store", "--target", u, "--size", "2MB")
	window := []string{"--target", u, "--rampup", "0s", "--duration", "2s", "--no-telemetry", "--json"}
	mixed, alone, orders := filepath.Join(dir, "mixed.json"), filepath.Join(dir, "alone.json"), filepath.Join(dir, "orders.json")
	mustRun(t, append([]string{"run", "dvd-store", "--vus", "1", "--with", "dvd-reports:1"}, append(window, mixed)...)...)
	o := mustRun(t, append([]string{"run", "dvd-reports", "--vus", "2"}, append(window, alone)...)...)
	wantIn(t, "run's summary", o.stdout, "Category sales to 2013-")
	mustRun(t, append([]string{"run", "dvd-store", "--vus", "1"}, append(window, orders)...)...)

	o = mustRun(t, "check", "dvd-store", "--target", u, "--result", mixed)
	wantIn(t, "check of the mixed run", o.stdout, "PASS  category_sales checksum")
	o = mustRun(t, "check", "dvd-reports", "--target", u, "--result", alone)
	wantIn(t, "check of the reports' run", o.stdout, "PASS  category_sales checksum")
	wantIn(t, "check of the reports' run", o.stdout, "Consistency check passed")

	var doc map[string]any
	b, err := os.ReadFile(alone)
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		t.Fatal(err)
	}
	row := doc["extra"].(map[string]any)["category_sales"].(map[string]any)["rows"].([]any)[0].(map[string]any)
	row["quarter"] = row["quarter"].(float64) + 0.01
	b, _ = json.Marshal(doc)
	changed := filepath.Join(dir, "changed.json")
	if err := os.WriteFile(changed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	o = dbrig(t, "check", "dvd-reports", "--target", u, "--result", changed)
	if o.code != 1 {
		t.Errorf("check of a changed total: exit %d, want 1", o.code)
	}
	wantIn(t, "check of a changed total", o.stdout, "FAIL  category_sales 1 Action, quarter")

	wantIn(t, "error", usageError(t, dbrig(t, "check", "dvd-reports", "--target", u, "--result", orders)), "keeps no dvd-reports answers")
	wantIn(t, "error", usageError(t, dbrig(t, "check", "dvd-reports", "--target", u, "--result", filepath.Join(dir, "none.json"))), "no result document")
	usageError(t, dbrig(t, "check", "tproc-c", "--target", u, "--result", alone))
}
