package cli_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestThresholdsRun: a real run on SQLite meets one threshold and misses
// another, printed with the figures and kept in the result; the miss is
// exit 1, the document written all the same.
func TestThresholdsRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := sqliteTPROCC(t)
	run := func(json string, thresholds ...string) outcome {
		args := []string{"run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "0s", "--duration", "2s", "--json", json}
		for _, th := range thresholds {
			args = append(args, "--threshold", th)
		}
		return dbrig(t, args...)
	}

	met := filepath.Join(dir, "met.json")
	o := run(met, "nopm>0", "errors<=0.5%", "new_order.p99.9 < 60s")
	if o.code != 0 {
		t.Fatalf("thresholds met: exit %d, want 0", o.code)
	}
	for _, want := range []string{"Thresholds: all 3 met", "PASS nopm>0: ", "PASS errors<=0.5%: 0.00%", "PASS new_order.p99.9<60s: "} {
		wantIn(t, "stdout", o.stdout, want)
	}
	doc := readDoc(t, met, "sqlite", "sql")
	if len(doc.Thresholds) != 3 || !doc.Thresholds[0].Met || doc.Thresholds[0].Measured == nil {
		t.Errorf("document's thresholds %+v, want 3 met with their figures", doc.Thresholds)
	}
	nopm, _ := doc.Metric("nopm")
	if *doc.Thresholds[0].Measured != nopm.Value() {
		t.Errorf("nopm measured %v, the document's nopm is %v", *doc.Thresholds[0].Measured, nopm.Value())
	}

	missed := filepath.Join(dir, "missed.json")
	o = run(missed, "nopm>0", "new_order.p50<1us", "nopm>1000000000")
	if o.code != 1 {
		t.Errorf("thresholds missed: exit %d, want 1", o.code)
	}
	wantIn(t, "stdout", o.stdout, "Thresholds: 2 of 3 missed")
	wantIn(t, "stdout", o.stdout, "PASS nopm>0: ")
	doc = readDoc(t, missed, "sqlite", "sql")
	if th := doc.Thresholds; len(th) != 3 || th[1].Met || th[2].Met || th[1].Measured == nil || th[1].Unit != "us" {
		t.Fatalf("document's thresholds %+v, want the last two missed, the p50 measured in us", th)
	}
	// The figures printed are the ones measured: the p50 in us, nopm.
	if !regexp.MustCompile(`\n  FAIL new_order\.p50<1us: [0-9.,]+ us\n`).MatchString(o.stdout) {
		t.Errorf("stdout does not give the missed p50 in us")
	}
	nopm, _ = doc.Metric("nopm")
	// Alone on its database, the run's two sides agree: the database's
	// figure stands, and the line says it judged that one.
	if nopm.Side() != result.SideDB {
		t.Errorf("nopm's side %q, want the database's", nopm.Side())
	}
	wantIn(t, "stdout", o.stdout, "\n  FAIL nopm>1000000000: "+human.Thousands(nopm.Value())+" (database)\n")

	// The report shows them as a table of their own.
	rep := mustRun(t, "report", "--text", missed).stdout
	if !regexp.MustCompile(`\nThresholds\n=+\n(.*\n)*\s*new_order\.p50<1us\s+[0-9.,]+ us\s+FAIL`).MatchString(rep) {
		t.Errorf("report --text has no Thresholds table with the missed p50:\n%s", rep)
	}
}

// TestThresholdsRefused: a threshold's mistake is one line, exit 2,
// naming what is known, before anything runs: no database is created.
func TestThresholdsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := "sqlite:" + dir + "/x.db"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--threshold", "nopn>5"}, `threshold "nopn>5": unknown metric "nopn" (known: nopm, tpm, errors, in_doubt, lost_acks; a metric's one side, such as nopm.client or nopm.db; or TRANSACTION.STAT, such as new_order.p95<5ms)`},
		{[]string{"--threshold", "neworder.p95<5ms"}, `unknown transaction "neworder" (known: new_order, payment, order_status, delivery, stock_level)`},
		{[]string{"--threshold", "new_order.p95<5"}, `unknown unit "" for a latency (known: us, ms, s)`},
		{[]string{"--threshold", "nopm=5"}, `unknown operator in "=5" (known: <, <=, >, >=)`},
		{[]string{"--threshold", "nopm>lots"}, `want a number after >`},
		{[]string{"--with", "dvd-reports:1", "--threshold", "dvd-reports:report.p95<1s"}, `unknown transaction "dvd-reports:report" (known: new_order, payment, order_status, delivery, stock_level, dvd-reports:category_sales)`},
		{[]string{"--part", "1/2", "--threshold", "nopm>5"}, "--threshold does not apply to --part"},
	} {
		args := append([]string{"run", "tproc-c", "--target", u, "--json", filepath.Join(dir, "r.json")}, c.args...)
		wantIn(t, "error", usageError(t, dbrig(t, args...)), c.want)
	}
	noFile(t, filepath.Join(dir, "x.db"))
	noFile(t, filepath.Join(dir, "r.json"))
}

// TestThresholdsKnowTransactions: every workload names its transaction
// types without a target, so that a threshold's are checked up front.
func TestThresholdsKnowTransactions(t *testing.T) {
	for _, name := range workload.Names() {
		w, _ := workload.New(name)
		if tt, ok := w.(workload.TxTyper); !ok || len(tt.TxTypes()) == 0 {
			t.Errorf("%s does not name its transaction types", name)
		}
	}
}

// TestThresholdsSweep: a sweep's thresholds are checked with its spec,
// held to every run, kept in each run's document and in its point, and a
// miss exits 1 once everything is saved; a resume of the finished sweep
// says so again.
func TestThresholdsSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "th.yaml")
	write := func(thresholds string) {
		body := "name: th\n" +
			"target: {url: 'sqlite:" + filepath.Join(dir, "x.db") + "'}\n" +
			"workload: tproc-c\n" +
			"build: {warehouses: 1}\n" +
			"run: {rampup: 0s, duration: 1s}\n" +
			"vary:\n  vus: [1, 2]\n" +
			"thresholds:\n" + thresholds
		if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("  - nopm>0\n  - neworder.p95<5ms\n")
	line := usageError(t, dbrig(t, "sweep", spec, "--dry-run"))
	if want := "dbrig: " + spec + ` line 10: thresholds: "neworder.p95<5ms": unknown transaction "neworder" (known: new_order, payment, order_status, delivery, stock_level)`; line != want {
		t.Errorf("error %q, want %q", line, want)
	}
	write("  nopm: '>0'\n")
	wantIn(t, "error", usageError(t, dbrig(t, "sweep", spec)), "line 9: thresholds: want a list")
	noFile(t, filepath.Join(dir, "x.db"))

	write("  - nopm>0\n  - new_order.p50 < 1us\n")
	wantIn(t, "dry-run", mustRun(t, "sweep", spec, "--dry-run").stdout, "Thresholds, every run: nopm>0 new_order.p50<1us\n")
	out := filepath.Join(dir, "out")
	o := dbrig(t, "sweep", spec, "--out", out)
	if o.code != 1 {
		t.Errorf("sweep with a threshold missed: exit %d, want 1", o.code)
	}
	re := regexp.MustCompile(`Thresholds: 2 times missed, in 2 of 2 runs:\n  point 1 \(vus=1\), repetition 1: FAIL new_order\.p50<1us: [0-9.,]+ us\n  point 2 \(vus=2\), repetition 1: FAIL new_order\.p50<1us: [0-9.,]+ us\n`)
	if !re.MatchString(o.stdout) {
		t.Errorf("stdout does not list the misses by point with their figures")
	}
	sw := readSweep(t, out)
	if !sw.Complete || sw.Done != 2 || !strings.Contains(string(sw.Spec), `"thresholds": [`) {
		t.Fatalf("sweep complete %v, done %d, spec %s: want complete, 2 runs, the thresholds kept", sw.Complete, sw.Done, sw.Spec)
	}
	for _, p := range sw.Points {
		doc, err := result.Read(filepath.Join(out, p.Runs[0]))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Thresholds) != 1 || !reflect.DeepEqual(p.Thresholds[0], doc.Thresholds) ||
			len(doc.Thresholds) != 2 || !doc.Thresholds[0].Met || doc.Thresholds[1].Met {
			t.Errorf("point %v: thresholds %+v, its run's %+v: want the run's, nopm met and the p50 missed", p.Params, p.Thresholds, doc.Thresholds)
		}
	}
	rep := mustRun(t, "report", "--text", filepath.Join(out, "sweep.json")).stdout
	if !regexp.MustCompile(`\nThresholds\n=+\n(.*\n)*\s*2 \(vus=2\)\s+1\s+new_order\.p50<1us\s+[0-9.,]+ us\s+FAIL\n`).MatchString(rep) {
		t.Errorf("the sweep's report has no Thresholds table with point 2's miss:\n%s", rep)
	}
	o = dbrig(t, "sweep", "--resume", out)
	if o.code != 1 || !re.MatchString(o.stdout) {
		t.Errorf("resume of the finished sweep: exit %d, want 1 with the misses", o.code)
	}
}
