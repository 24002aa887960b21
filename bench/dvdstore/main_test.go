//go:build unix

package main

import (
	"testing"

	"github.com/dbrig/dbrig/bench/internal/harness"
)

// TestSQLBlocks: the benchmark reads dvd-store's PostgreSQL SQL from the
// checkout, as the build does, and finds every block it runs, so a move
// of the SQL cannot break it unseen until the next benchmark.
func TestSQLBlocks(t *testing.T) {
	schema, err := harness.RepoSQL("", sqlDir, "schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range []string{"tables", "keys", "sequences", "analyze", "drop"} {
		if _, ok := schema[block]; !ok {
			t.Errorf("no block %q in %s's schema for PostgreSQL", block, sqlDir)
		}
	}
	if n := len(schema.Statements("tables")); n != len(tables) {
		t.Errorf("%d table statements, want one per table (%d)", n, len(tables))
	}
	procs, err := harness.RepoSQL("", sqlDir, "procs.sql")
	if err != nil {
		t.Fatal(err)
	}
	if len(procs.Named("proc:")) == 0 {
		t.Errorf("no functions in %s's procs.sql for PostgreSQL", sqlDir)
	}
}

// TestSplit: the files of a split table cover every id up to the max
// and no more, in whole ranges.
func TestSplit(t *testing.T) {
	maxID := map[string]int64{"ds_orders": 2*idsPerFile + 1, "ds_customers": 0}
	split := splitFunc(maxID)
	if got := split("ds_products"); got != nil {
		t.Errorf("ds_products split into %q, want one file", got)
	}
	if got := split("ds_customers"); len(got) != 0 {
		t.Errorf("no customers split into %q, want no range", got)
	}
	got := split("ds_orderlines")
	want := []string{"orderid BETWEEN 1 AND 250000", "orderid BETWEEN 250001 AND 500000", "orderid BETWEEN 500001 AND 750000"}
	if len(got) != len(want) {
		t.Fatalf("ds_orderlines split into %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("range %d is %q, want %q", i, got[i], want[i])
		}
	}
}
