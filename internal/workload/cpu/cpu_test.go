package cpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"

	_ "github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	_ "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
)

func TestNativeLoop(t *testing.T) {
	n, secs := nativeLoop(Loops)
	if got := fmt.Sprintf("%.2f", n); got != Result || secs <= 0 {
		t.Errorf("native loop: %s in %v s, want %s", got, secs, Result)
	}
	// With the truncating integer remainder, as SQLite's % would do, the
	// loop gives another result: what the check must catch.
	if got := fmt.Sprintf("%.2f", truncatingLoop(Loops)); got != "875413.28" {
		t.Errorf("integer remainder gives %s, want 875413.28", got)
	}
}

func open(t *testing.T, url string, w *cpu) (dbtarget.Target, workload.Run) {
	t.Helper()
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return tg, r
}

func measure(t *testing.T, tg dbtarget.Target, w *cpu, r workload.Run) *result.Document {
	t.Helper()
	d, err := runner.Run(context.Background(), tg, w, r, runner.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkDoc checks a finished run: every loop returned the known result,
// the metrics are there on the sides they should be, and the references.
func checkDoc(t *testing.T, d *result.Document, loops int, dbClock bool) {
	t.Helper()
	if d.Transactions[0].Count != int64(loops) || d.Transactions[0].Errors != 0 {
		t.Errorf("%d loops, %d errors; want %d and none", d.Transactions[0].Count, d.Transactions[0].Errors, loops)
	}
	secs, _ := d.Metric(metricSeconds)
	rate, _ := d.Metric(metricRate)
	if secs.Client == nil || rate.Client == nil {
		t.Fatalf("no client side: seconds %v, rate %v", secs.Client, rate.Client)
	}
	lines := strings.Join(d.Lines, "\n")
	// A wall clock set mid-loop (this VM's was, under load) leaves the
	// client's clock alone, and says so.
	if dbClock && secs.DB == nil && strings.Contains(lines, clockStepped+": ") {
		t.Logf("the database's clock was set during the run: %s", lines)
		dbClock = false
	}
	if *secs.Client <= 0 || (secs.DB != nil) != dbClock || *rate.Client <= 0 || rate.DB != nil {
		t.Errorf("seconds per loop %+v, loops per minute %+v (database clock expected: %v)", secs, rate, dbClock)
	}
	if secs.DB != nil && (*secs.DB > *secs.Client || *secs.DB < *secs.Client*0.5) {
		t.Errorf("database clock %.3f s against client clock %.3f s", *secs.DB, *secs.Client)
	}
	if !strings.Contains(lines, "Result "+Result+" in all") || d.Config["expected_result"] != Result {
		t.Errorf("summary does not show the checked result:\n%s\nconfig %v", lines, d.Config)
	}
	if _, ok := d.Extra["native_seconds"].(float64); !ok {
		t.Errorf("no native reference in %v", d.Extra)
	}
}

// TestCPUSQLite: the study's loop, 10,000,000 iterations, returns
// 873729.72 in float on SQLite, and numeric, which runs as float there and
// says so, agrees with the native loop over a tenth of it (the same
// arithmetic: the whole again would only cost the suite its time, in each
// of the three builds make test runs it in); each says whose math
// functions it ran with: SQLite's own, or, in a cgo build without -tags
// sqlite_math_functions, those registered from Go (which `make test` runs
// as CPUSQLite/float).
func TestCPUSQLite(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "cpu.db")
	for _, arith := range []string{arithNumeric, arithFloat} {
		t.Run(arith, func(t *testing.T) {
			loops := Loops
			if arith == arithNumeric {
				loops = Loops / 10
			}
			w := &cpu{sessions: 1, loops: loops, arith: arith, repeat: 1}
			tg, r := open(t, url, w)
			d := measure(t, tg, w, r)
			lines := strings.Join(d.Lines, "\n")
			if loops == Loops {
				checkDoc(t, d, 1, false)
			} else if n, _ := nativeLoop(loops); !strings.Contains(lines, fmt.Sprintf("Result %.2f in all", n)) {
				t.Errorf("a tenth of the loop: lines %q, want the native loop's %.2f", d.Lines, n)
			}
			if arith == arithNumeric && !strings.Contains(lines, "no decimal arithmetic") {
				t.Errorf("numeric on SQLite does not say it ran in float: %q", d.Lines)
			}
			if d.Extra["math_functions"] != wantFunctions || !strings.Contains(lines, "Math functions: "+wantLine) {
				t.Errorf("math functions %v, lines %q; want %s, %q", d.Extra["math_functions"], d.Lines, wantFunctions, wantLine)
			}
		})
	}
}

// TestCPUPostgres: the same on PostgreSQL, in PL/pgSQL, both modes, with
// the server's own clock.
func TestCPUPostgres(t *testing.T) {
	url := pgtest.NewDB(t)
	for _, arith := range []string{arithNumeric, arithFloat} {
		w := &cpu{sessions: 1, loops: Loops, arith: arith, repeat: 1}
		tg, r := open(t, url, w)
		checkDoc(t, measure(t, tg, w, r), 1, true)
	}
}

// TestCPUMariaDB: the same on MariaDB, as stored procedures timed by the
// server's clock: the study's loop in DOUBLE gives 873729.72, and DECIMAL
// agrees with the native loop over a hundredth of it (the whole takes
// some 40 s there; the same arithmetic over more would only cost the
// suite its CPU), in two sessions that create the procedure at once.
func TestCPUMariaDB(t *testing.T) {
	url := mariatest.NewDB(t)
	w := &cpu{sessions: 1, loops: Loops, arith: arithFloat, repeat: 1}
	tg, r := open(t, url, w)
	checkDoc(t, measure(t, tg, w, r), 1, true)

	w = &cpu{sessions: 2, loops: Loops / 100, arith: arithNumeric, repeat: 1}
	tg, r = open(t, url, w)
	d := measure(t, tg, w, r)
	n, _ := nativeLoop(w.loops)
	want := fmt.Sprintf("%.2f", n)
	if d.Transactions[0].Count != 2 || d.Transactions[0].Errors != 0 || d.Config["arith_run"] != arithNumeric ||
		!strings.Contains(strings.Join(d.Lines, "\n"), "Result "+want+" in all") {
		t.Errorf("DECIMAL loop: %d loops, %d errors, arith %v; lines %q; want 2 giving %s",
			d.Transactions[0].Count, d.Transactions[0].Errors, d.Config["arith_run"], d.Lines, want)
	}
}

// TestCPUSessions: sessions × repeat loops run, all counted, with the
// one-session reference and the scaling efficiency.
func TestCPUSessions(t *testing.T) {
	w := &cpu{sessions: 2, loops: 300_000, arith: arithFloat, repeat: 2}
	tg, r := open(t, pgtest.NewDB(t), w)
	d := measure(t, tg, w, r)
	if d.Transactions[0].Count != 4 {
		t.Errorf("%d loops, want 2 sessions × 2", d.Transactions[0].Count)
	}
	if eff, ok := d.Extra["scaling_efficiency_pct"].(float64); !ok || eff <= 0 {
		t.Errorf("scaling efficiency %v", d.Extra)
	}
	if d.Config["sessions"] != 2 || d.Config["vus"] != nil {
		t.Errorf("config %v: sessions recorded, no timed-run parameters", d.Config)
	}
}

// TestTamperedLoop: a loop that computes something else (here with
// SQLite's truncating integer %) ends the run with an error that names
// the value it got, and no result.
func TestTamperedLoop(t *testing.T) {
	w := &cpu{sessions: 1, loops: Loops / 10, arith: arithFloat, repeat: 1}
	tg, r := open(t, "sqlite:"+filepath.Join(t.TempDir(), "cpu.db"), w)
	cr := r.(*run)
	tampered := strings.Replace(cr.loop, "n - 999999.0 * floor(n / 999999.0)", "n % 999999", 1)
	if tampered == cr.loop {
		t.Fatal("the loop's remainder was not found to tamper with")
	}
	cr.loop = tampered
	d, err := runner.Run(context.Background(), tg, w, r, runner.Defaults())
	n, _ := nativeLoop(w.loops)
	want, got := fmt.Sprintf("%.2f", n), fmt.Sprintf("%.2f", truncatingLoop(w.loops))
	if d != nil || !errors.Is(err, driver.ErrAbort) || !strings.Contains(err.Error(), "returned "+got+", not "+want) {
		t.Fatalf("tampered loop: document %v, error %v; want no document and an error naming %s and %s", d != nil, err, got, want)
	}
}

// truncatingLoop is the loop with SQLite's %, which takes the integer
// part of n (TestNativeLoop: over the study's 10,000,000 iterations it
// gives 875413.28; over a tenth of them 168166.00, against 667832.46).
func truncatingLoop(loops int) float64 {
	n := 0.0
	for f := 1; f <= loops; f++ {
		n = float64(int64(n)%999999) + math.Sqrt(float64(f))
	}
	return n
}

func TestOptions(t *testing.T) {
	tg, _ := open(t, "sqlite:"+filepath.Join(t.TempDir(), "cpu.db"), &cpu{sessions: 1, loops: 1, arith: arithFloat, repeat: 1})
	for _, w := range []*cpu{
		{sessions: 0, loops: 1, arith: arithFloat, repeat: 1},
		{sessions: 1, loops: 0, arith: arithFloat, repeat: 1},
		{sessions: 1, loops: 1, arith: "decimal", repeat: 1},
		{sessions: 1, loops: 1, arith: arithFloat, repeat: 0},
	} {
		_, err := w.Open(context.Background(), tg)
		var ue *exitcode.UserError
		if !errors.As(err, &ue) {
			t.Errorf("%+v: err %v, want a user error", *w, err)
		}
	}
}

// TestSummarizeWindow: a loop that ends after the window closed (the one
// in hand at a Ctrl-C) does not count; the others give the median and the
// rate over the window.
func TestSummarizeWindow(t *testing.T) {
	start := time.Now()
	end := start.Add(10 * time.Second)
	r := &run{opt: cpu{sessions: 2, loops: Loops, repeat: 2}, arith: arithFloat, want: Result, native: 0.1}
	r.vus = []*vu{
		{loops: []loopResult{{db: 1, client: 1.1, ended: start.Add(2 * time.Second)}, {db: 3, client: 3.1, ended: start.Add(5 * time.Second)}}},
		{loops: []loopResult{{db: 2, client: 2.1, ended: start.Add(4 * time.Second)}, {db: 9, client: 9.1, ended: end.Add(time.Second)}}},
	}
	s := r.Summarize(&driver.Result{WindowStart: start, WindowEnd: end}, workload.Mark{}, workload.Mark{})
	secs, rate := s.Values[metricSeconds], s.Values[metricRate]
	if secs.DB == nil || *secs.DB != 2 || math.Abs(*secs.Client-2.1) > 1e-9 || *rate.Client != 18 {
		t.Errorf("seconds %+v (db %v), rate %v; want median 2 (db) and 2.1 (client), 3 loops in 10 s = 18 a minute", secs, secs.DB, *rate.Client)
	}
	if ratio := s.Extra["engine_overhead"]; ratio != 20.0 {
		t.Errorf("engine overhead %v, want 2 / 0.1 = 20", ratio)
	}

	// A loop the database timed longer than its round trip saw its wall
	// clock set: the client's clock stands for all of them, and a line
	// says why.
	r.vus[1].loops[0].db = 2.6
	s = r.Summarize(&driver.Result{WindowStart: start, WindowEnd: end}, workload.Mark{}, workload.Mark{})
	secs = s.Values[metricSeconds]
	want := clockStepped + ": the database's clock ran ahead of the client's round trip in 1 of 3 loops, by up to 0.500 s"
	if secs.DB != nil || math.Abs(*secs.Client-2.1) > 1e-9 || !slices.ContainsFunc(s.Lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
		t.Errorf("seconds %+v (db %v), lines %q; want the client's 2.1 alone, and a line %q", secs, secs.DB, s.Lines, want)
	}
}
