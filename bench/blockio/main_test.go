//go:build unix

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/bench/internal/harness"
	pgtarget "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestPgbenchScripts: pgbench runs block-io's own statements, from the
// checkout, with its session's settings, so that a change to block-io's
// SQL cannot leave the benchmark comparing dbrig with other work.
func TestPgbenchScripts(t *testing.T) {
	repo, err := harness.FindRepo("")
	if err != nil {
		t.Fatal(err)
	}
	op, err := workload.LoadSQL(os.DirFS(repo), opDir, pgtarget.Dialect, "op.sql")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		modeProcs: "SELECT blockio1_read(:lo, :hi);",
		modeSQL:   "SELECT count(n) FROM blockio1 WHERE key > :lo AND key <= :hi;",
	}
	for mode, stmt := range want {
		script := pgbenchScript(op, mode)
		if !strings.Contains(script, stmt) || strings.ContainsAny(script, "${}") {
			t.Errorf("%s script:\n%s\nwant the statement %s, every placeholder replaced", mode, script, stmt)
		}
	}
	if got, err := pgbenchOptions(op); err != nil || got != "-c enable_bitmapscan=off" {
		t.Errorf("pgbenchOptions = %q, %v; want -c enable_bitmapscan=off", got, err)
	}
	if _, err := pgbenchOptions(workload.SQLFile{"session": "SELECT set_config('x', 'y', false);"}); err == nil {
		t.Error("pgbenchOptions took a session statement that is not a SET")
	}
}

// TestPgbenchCount reads pgbench 15's summary, and does without the
// failures line older ones lack.
func TestPgbenchCount(t *testing.T) {
	out := []byte("duration: 5 s\nnumber of transactions actually processed: 41129\nnumber of failed transactions: 3 (0.007%)\nlatency average = 0.484 ms\n")
	if n, ok := pgbenchCount(out, "transactions actually processed"); !ok || n != 41129 {
		t.Errorf("processed = %d, %v; want 41129", n, ok)
	}
	if n, ok := pgbenchCount(out, "failed transactions"); !ok || n != 3 {
		t.Errorf("failed = %d, %v; want 3", n, ok)
	}
	if _, ok := pgbenchCount([]byte("number of transactions actually processed: 7\n"), "failed transactions"); ok {
		t.Error("found a failures line where there is none")
	}
}

// TestRatios: each dbrig run is divided by pgbench's of the same pair,
// and the summary is the ratio of the means.
func TestRatios(t *testing.T) {
	run := func(client string, cpu float64) Run {
		return Run{Client: client, CPUSeconds: cpu, LogicalReads: 1e6}
	}
	dbrig := []Run{run(clientDbrig, 2), run(clientDbrig, 3)}
	floor := []Run{run(clientPgbench, 1), run(clientPgbench, 2)}
	if got, want := ratios(dbrig, floor), "2.00 1.50\t1.67"; got != want {
		t.Errorf("ratios = %q, want %q", got, want)
	}
	if got := ratios(floor, floor); got != "\t" {
		t.Errorf("pgbench's own ratios = %q, want two empty columns", got)
	}
	if got := ratios(dbrig, nil); got != "\t" {
		t.Errorf("ratios without pgbench (loop mode) = %q, want two empty columns", got)
	}
}
