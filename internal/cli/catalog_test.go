package cli_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/catalog/catalogtest"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// TestCatalogSQLite: a run is catalogued as it is written, with its tags
// and commit; runs, show, history and regress read it; --no-catalog
// records nothing; and each mistake is one line and exit 2, before any
// run.
func TestCatalogSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := sqliteTPROCC(t)
	cat := "sqlite:" + dir + "/catalog.db"
	path := filepath.Join(dir, "r.json")
	o := mustRun(t, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "0s", "--duration", "3s", "--json", path,
		"--catalog", cat, "--tag", "first", "--tag", "pr-12", "--commit", "4f2a9c1")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	id := hex.EncodeToString(sum[:])
	wantIn(t, "run's stdout", o.stdout, "Catalogued: run "+catalog.ShortID(id))

	var es []catalog.Entry
	o = mustRun(t, "runs", "--catalog", cat, "--json")
	if err := json.Unmarshal([]byte(o.stdout), &es); err != nil || len(es) != 1 {
		t.Fatalf("runs --json: %d entries, %v", len(es), err)
	}
	e := es[0]
	if e.ID != id || e.Workload != "tproc-c" || e.TargetKind != "sqlite" || e.Commit != "4f2a9c1" || strings.Join(e.Tags, ",") != "first,pr-12" || e.Config["vus"] != "2" {
		t.Fatalf("the entry: %+v", e)
	}
	// The same document imported again is the same entry.
	o = mustRun(t, "catalog", "import", "--catalog", cat, path)
	wantAll(t, "import again", o.stdout, "Imported 0 documents", "1 document already there")
	o = mustRun(t, "runs", "show", id[:6], "--catalog", cat, "--document")
	if o.stdout != string(b) {
		t.Fatal("runs show --document is not the document as written")
	}
	for _, args := range [][]string{
		{"runs", "--catalog", cat, "--where", "config.vus=2", "--tag", "pr-12", "--csv"},
		{"runs", "--catalog", cat, "--markdown"},
		{"history", "nopm", "--catalog", cat, "--where", "config.vus=2"},
	} {
		o = mustRun(t, args...)
		wantIn(t, strings.Join(args, " "), o.stdout, catalog.ShortID(id))
	}
	o = mustRun(t, "runs", "--catalog", cat, "--where", "config.vus=3")
	wantIn(t, "runs that none match", o.stderr, "No runs")
	mustRun(t, "runs", "tag", id[:8], "baseline", "--catalog", cat)
	wantIn(t, "tagged", mustRun(t, "runs", "--catalog", cat, "--tag", "baseline").stdout, catalog.ShortID(id))

	// --no-catalog: the document, and nothing in the catalogue (the
	// tests' own, $DBRIG_CATALOG, which TestMain set).
	n := filepath.Join(dir, "n.json")
	o = mustRun(t, "run", "tproc-c", "--target", u, "--vus", "1", "--rampup", "0s", "--duration", "1s", "--json", n, "--no-catalog")
	if strings.Contains(o.stdout, "Catalogued") {
		t.Error("--no-catalog: the run says it was catalogued")
	}
	b, err = os.ReadFile(n)
	if err != nil {
		t.Fatal(err)
	}
	sum = sha256.Sum256(b)
	wantIn(t, "--no-catalog", usageError(t, dbrig(t, "runs", "show", hex.EncodeToString(sum[:]))), "no run")

	newer := "sqlite:" + dir + "/newer.db"
	mustRun(t, "runs", "--catalog", newer)
	raiseCatalog(t, newer)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "tproc-c", "--target", u, "--duration", "1s", "--json", filepath.Join(dir, "bad1.json"), "--catalog", "mysql://x:secret@h/db"}, "not a catalogue URL"},
		{[]string{"run", "tproc-c", "--target", u, "--duration", "1s", "--json", filepath.Join(dir, "bad2.json"), "--catalog", newer}, "newer dbrig"},
		{[]string{"run", "tproc-c", "--target", u, "--duration", "1s", "--json", filepath.Join(dir, "bad3.json"), "--no-catalog", "--tag", "x"}, "--no-catalog records nothing"},
		{[]string{"runs", "--catalog", cat, "--where", "vus=2"}, `no field "vus"`},
		{[]string{"runs", "--catalog", cat, "--where", "metric.nopm~1"}, "as a number"},
		{[]string{"runs", "--catalog", cat, "--since", "yesterday"}, "--since"},
		{[]string{"runs", "show", "zz", "--catalog", cat}, "not a run ID"},
		{[]string{"runs", "show", "abcdef12", "--catalog", cat}, "no run abcdef12"},
		{[]string{"history", "nope", "--catalog", cat}, "they have"},
		{[]string{"regress", "--catalog", cat}, "--metric"},
		{[]string{"regress", "--metric", "nopm", "--catalog", cat}, "no baseline"},
		{[]string{"regress", "--metric", "nopm", "--baseline", "last:0", "--catalog", cat}, "last:N"},
		{[]string{"runs", "--catalog", cat, "--json", "--csv"}, "choose one"},
		{[]string{"catalog", "import", "--catalog", cat, filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"serve", "--catalog", cat, "--addr", "0.0.0.0:0"}, "--token-file"},
		{[]string{"serve", "--catalog", cat, "--addr", "0.0.0.0:0", "--token", "short"}, "16 or more"},
		{[]string{"serve", "--catalog", cat, "--addr", "nowhere"}, "HOST:PORT"},
		{[]string{"serve", "--catalog", cat, "--max-upload", "lots"}, "--max-upload"},
		{[]string{"compare", path, "abcdef12", "--catalog", cat}, "no run abcdef12"},
		{[]string{"compare", path, path, path, "--html", filepath.Join(dir, "c.html"), "--catalog", cat}, "--html compares two"},
	} {
		msg := usageError(t, dbrig(t, tc.args...))
		wantIn(t, strings.Join(tc.args, " "), msg, tc.want)
		if strings.Contains(msg, "secret") {
			t.Errorf("%s: the password printed: %s", tc.args, msg)
		}
	}
	for _, f := range []string{"bad1.json", "bad2.json", "bad3.json"} {
		noFile(t, filepath.Join(dir, f))
	}
}

// TestRegressExitsSQLite: regress's exit code gates a pipeline: 1 at the
// run where the test moved the metric down 10%, 0 before it and at the
// newest, which its baseline already shares the new level with; both
// name the change point at run 20.
func TestRegressExitsSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cat := "sqlite:" + dir + "/catalog.db"
	var ids []string
	for i, b := range catalogtest.Step(t, 0.9, 9) {
		p := filepath.Join(dir, fmt.Sprintf("r%02d.json", i+1))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		ids = append(ids, hex.EncodeToString(sum[:])[:12])
	}
	wantIn(t, "import", mustRun(t, "catalog", "import", "--catalog", cat, "--tag", "step", dir).stdout, "Imported 30 documents")
	for _, tc := range []struct {
		run  string
		code int
	}{{"", 0}, {ids[19], exitcode.Fail}, {ids[18], 0}} {
		args := []string{"regress", "--metric", "nopm", "--tag", "step", "--catalog", cat}
		if tc.run != "" {
			args = append(args, "--run", tc.run)
		}
		o := dbrig(t, args...)
		if o.code != tc.code {
			t.Errorf("%s: exit %d, want %d", args, o.code, tc.code)
		}
		wantAll(t, strings.Join(args, " "), o.stdout, "Change point at run "+ids[19], "the 20th of 30")
	}
	wantIn(t, "history", mustRun(t, "history", "nopm", "--tag", "step", "--catalog", cat).stdout, "changed at run "+ids[19])
	// Three runs side by side, by ID: the 20th 10% or so below the first.
	o := mustRun(t, "compare", ids[0], ids[19], ids[29], "--catalog", cat)
	wantAll(t, "compare of three", o.stdout, ids[19]+" 2026-11-01 19:00", "NOPM", "%)")
}

// TestImportOtherToolsSQLite: a HammerDB jobs database, a BenchBase
// summary and a k6 summary, each written by its tool, list beside a dbrig
// run, each marked with its tool and its own headline figure.
func TestImportOtherToolsSQLite(t *testing.T) {
	t.Parallel()
	cat := "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")
	fixtures := "../catalog/foreign/testdata/"
	o := mustRun(t, "catalog", "import", "--catalog", cat, fixtures+"hammerdb-jobs.db", fixtures+"benchbase-tpcc.summary.json",
		fixtures+"k6-summary-export.json", "../report/testdata/telemetry-run.json")
	wantIn(t, "import", o.stdout, "0 files skipped")
	var es []catalog.Entry
	if err := json.Unmarshal([]byte(mustRun(t, "runs", "--catalog", cat, "--json").stdout), &es); err != nil {
		t.Fatal(err)
	}
	table := mustRun(t, "runs", "--catalog", cat).stdout
	tools := map[string]int{}
	for _, e := range es {
		tools[e.Tool]++
		m, ok := e.Metric(e.Primary)
		if e.Tool == "dbrig" || e.Workload != "tproc-h" { // a TPROC-H build measures nothing
			if !ok || m.Value <= 0 {
				t.Errorf("%s entry %s: headline %q %+v, want a figure", e.Tool, catalog.ShortID(e.ID), e.Primary, m)
			}
		}
		line := tableLine(t, table, catalog.ShortID(e.ID))
		kind := e.Tool + " run"
		if e.Tool == "dbrig" {
			kind = "run"
		}
		wantAll(t, "its line", line, kind, e.Workload)
		if ok {
			wantIn(t, "its line", line, m.Label)
		}
	}
	if tools["dbrig"] != 1 || tools["hammerdb"] == 0 || tools["benchbase"] != 1 || tools["k6"] != 1 {
		t.Errorf("entries by tool %v, want the dbrig run, HammerDB's jobs, BenchBase's and k6's run", tools)
	}
}

// tableLine is the line of table that starts with id.
func tableLine(t *testing.T, table, id string) string {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, id+" ") {
			return l
		}
	}
	t.Errorf("no line of the table starts with %s:\n%s", id, table)
	return ""
}

// raiseCatalog makes the catalogue at url look like a newer dbrig's,
// through whichever SQLite driver the binary links.
func raiseCatalog(t *testing.T, url string) {
	t.Helper()
	driver := "sqlite"
	if slices.Contains(sql.Drivers(), "sqlite3") {
		driver = "sqlite3"
	}
	db, err := sql.Open(driver, strings.TrimPrefix(url, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("UPDATE catalog_meta SET value = '%d' WHERE key = 'schema_version'", catalog.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
}

// wantAll fails unless s holds every one of subs.
func wantAll(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		wantIn(t, what, s, sub)
	}
}
