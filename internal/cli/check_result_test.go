package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// TestCheckResultSQLite: dvd-reports' answers, kept in a run's document
// alone or beside dvd-store, pass `check --result` on the database they
// ran on; a total changed in the document is a FAIL naming its category
// (exit 1); a missing document, or one without the answers, is exit 2;
// a workload that keeps no answers has no --result. The report's page
// shows the table.
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

	// The page shows the table with the summary lines.
	page := filepath.Join(dir, "alone.html")
	mustRun(t, "report", alone, "-o", page)
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "Category sales to 2013-") {
		t.Errorf("the page shows no category sales (%v)", err)
	}
}

// TestCheckResultPartsPostgres: dvd-reports in two parts, two processes:
// the merged document keeps one table, every category's answers added
// up, with the totals and checksum of the run in one process, and it
// passes check --result.
func TestCheckResultPartsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two dbrig processes")
	}
	u := pgtest.NewDB(t)
	mustRun(t, "build", "dvd-store", "--target", u, "--size", "2MB")
	bin := buildBinary(t)
	dir := t.TempDir()
	var paths []string
	var ps []*part
	for k := 1; k <= 2; k++ {
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("p%d.json", k)))
		ps = append(ps, startPart(t, bin, "run", "dvd-reports", "--target", u, "--vus", "4", "--rampup", "1s", "--duration", "3s",
			"--no-telemetry", "--part", fmt.Sprintf("%d/2", k), "--part-run", "r", "--part-timeout", "60s", "--json", paths[k-1]))
	}
	for _, p := range ps {
		if code := p.wait(t, 2*time.Minute); code != 0 {
			t.Fatalf("a part exited %d, want 0: %s", code, p.lastLine())
		}
	}
	merged, single := filepath.Join(dir, "merged.json"), filepath.Join(dir, "single.json")
	mustRun(t, append(append([]string{"merge"}, paths...), "--json", merged)...)
	mustRun(t, "run", "dvd-reports", "--target", u, "--vus", "4", "--rampup", "0s", "--duration", "3s", "--no-telemetry", "--json", single)
	o := mustRun(t, "check", "dvd-reports", "--target", u, "--result", merged)
	wantIn(t, "check of the merged run", o.stdout, "PASS  category_sales checksum")

	table := func(path string) map[string]any {
		d, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		return d.Extra["category_sales"].(map[string]any)
	}
	var answers float64
	for _, p := range paths {
		for _, r := range table(p)["rows"].([]any) {
			answers += r.(map[string]any)["answers"].(float64)
		}
	}
	m, s := table(merged), table(single)
	var got float64
	for _, r := range m["rows"].([]any) {
		got += r.(map[string]any)["answers"].(float64)
	}
	if got != answers || len(m["rows"].([]any)) != 16 || m["checksum"] != s["checksum"] {
		t.Errorf("merged: %v answers in %d rows, checksum %v; want the parts' %v answers, 16 rows, the single run's checksum %v",
			got, len(m["rows"].([]any)), m["checksum"], answers, s["checksum"])
	}
}
