package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixture copies the report package's fixture documents into a fresh
// directory, so that the default output lands there and not in the tree.
func copyFixture(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("..", "report", "testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readHTML(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report at %s: %v", path, err)
	}
	if !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Fatalf("%s is not an HTML page", path)
	}
	return string(b)
}

func TestReportCommand(t *testing.T) {
	dir := copyFixture(t, "run.json", "sweep.json")

	// Default output: next to the input, with .html.
	o := mustRun(t, "report", filepath.Join(dir, "sweep.json"))
	wantIn(t, "stdout", o.stdout, filepath.Join(dir, "sweep.html"))
	wantIn(t, "sweep report", readHTML(t, filepath.Join(dir, "sweep.html")), `<tr id="point-7">`)

	out := filepath.Join(dir, "out", "run-report.html")
	mustRun(t, "report", filepath.Join(dir, "run.json"), "-o", out)
	wantIn(t, "run report", readHTML(t, out), `<tr id="tx-new_order">`)
}

func TestReportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	wantIn(t, "stderr", usageError(t, dbrig(t, "report", filepath.Join(dir, "missing.json"))), "no such file")
	usageError(t, dbrig(t, "report"))
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantIn(t, "stderr", usageError(t, dbrig(t, "report", bad)), "not a dbrig result")
}

func TestCompareCommand(t *testing.T) {
	dir := copyFixture(t, "run.json", "runs/p00-r0.json", "sweep.json")
	a, b := filepath.Join(dir, "run.json"), filepath.Join(dir, "runs/p00-r0.json")
	page := filepath.Join(dir, "cmp.html")
	o := mustRun(t, "compare", a, b, "--html", page)
	for _, want := range []string{"nopm_client", "p95_ms", "new_order", "+0.0%", "different servers"} {
		wantIn(t, "stdout", o.stdout, want)
	}
	wantIn(t, "comparison page", readHTML(t, page), "B vs A")

	o = mustRun(t, "compare", filepath.Join(dir, "sweep.json"), filepath.Join(dir, "sweep.json"))
	wantIn(t, "stdout", o.stdout, "shared_buffers=2GB vus=4")
	wantIn(t, "stdout", o.stdout, "95% CIs overlap")

	wantIn(t, "stderr", usageError(t, dbrig(t, "compare", a, filepath.Join(dir, "sweep.json"))), "cannot compare a run with a sweep")
	usageError(t, dbrig(t, "compare", a))
}

// TestSchema1Documents: documents written by dbrig before schema 2 (real
// runs on SQLite and on a managed PostgreSQL 15, and a real two-point
// SQLite sweep, kept in testdata/v1) still render and compare, with their
// headline figures carried into the declared metrics.
func TestSchema1Documents(t *testing.T) {
	dir := copyFixture(t, "v1/run.json", "v1/run-postgres.json", "v1/sweep/sweep.json",
		"v1/sweep/runs/p01-r1.json", "v1/sweep/runs/p01-r2.json", "v1/sweep/runs/p02-r1.json", "v1/sweep/runs/p02-r2.json")
	v1 := filepath.Join(dir, "v1")

	mustRun(t, "report", filepath.Join(v1, "run-postgres.json"))
	page := readHTML(t, filepath.Join(v1, "run-postgres.html"))
	// The stored database-side NOPM, 47963.11, shown as the headline.
	for _, want := range []string{"NOPM (database)", "47,963", "TPM (database)", "108,359", `<tr id="tx-new_order">`, "new_order per minute"} {
		wantIn(t, "schema-1 run report", page, want)
	}
	mustRun(t, "report", filepath.Join(v1, "sweep", "sweep.json"))
	page = readHTML(t, filepath.Join(v1, "sweep", "sweep.html"))
	for _, want := range []string{`<tr id="point-1">`, "45,208", "46,859", "3.7%", "Change in NOPM over the baseline"} {
		wantIn(t, "schema-1 sweep report", page, want)
	}

	o := mustRun(t, "compare", filepath.Join(v1, "run.json"), filepath.Join(v1, "run-postgres.json"))
	for _, want := range []string{"nopm_client", "44,250", "47,937", "different servers", "new_order"} {
		wantIn(t, "schema-1 compare", o.stdout, want)
	}
	o = mustRun(t, "compare", filepath.Join(v1, "sweep", "sweep.json"), filepath.Join(v1, "sweep", "sweep.json"))
	for _, want := range []string{"vus=2", "nopm (mean)", "46,859", "+0.0%"} {
		wantIn(t, "schema-1 sweep compare", o.stdout, want)
	}
}

// TestTextOutputIsSafe: a crafted document whose text holds terminal
// escapes (retitle the window, clear the screen, ring the bell, go back to
// the line's start) prints them written out in report --text and compare,
// never as the control characters themselves.
func TestTextOutputIsSafe(t *testing.T) {
	dir := copyFixture(t, "run.json")
	var doc map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	const evil = "\x1b]0;owned\a\x1b[2J\rfake"
	tg := doc["target"].(map[string]any)
	tg["version"] = "3.53" + evil
	tg["url"] = "sqlite:x.db" + evil
	doc["summary_lines"] = append(doc["summary_lines"].([]any), "line"+evil)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	crafted := filepath.Join(dir, "crafted.json")
	if err := os.WriteFile(crafted, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", "--text", crafted},
		{"compare", crafted, filepath.Join(dir, "run.json")},
	} {
		o := mustRun(t, args...)
		if strings.ContainsAny(o.stdout, "\x1b\a\r") {
			t.Errorf("dbrig %s printed control characters:\n%q", args[0], o.stdout)
		}
		wantIn(t, args[0], o.stdout, `3.53\x1b]0;owned\a\x1b[2J\rfake`)
	}
}

// TestHugeDocument: a document that never ends, or one past
// --max-document-size, is one line and exit 2, refused before it is read
// whole (report /dev/zero read until the machine ran out of memory).
func TestHugeDocument(t *testing.T) {
	wantIn(t, "report /dev/zero", usageError(t, dbrig(t, "report", "--text", "/dev/zero")), "not a dbrig result")
	dir := copyFixture(t, "run.json")
	run := filepath.Join(dir, "run.json")
	for _, args := range [][]string{{"report", "--text", run}, {"merge", run, run}, {"compare", run, run}} {
		line := usageError(t, dbrig(t, append(args, "--max-document-size", "1KB")...))
		wantIn(t, args[0], line, "more than the 1.0 KiB a document may be: --max-document-size raises the limit")
	}
	usageError(t, dbrig(t, "report", run, "--max-document-size", "lots"))
	mustRun(t, "report", "--text", run)
}
