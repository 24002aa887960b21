//go:build unix

package main

import (
	"testing"

	"github.com/dbrig/dbrig/bench/internal/harness"
)

// TestSchemaBlocks: the benchmark reads tproc-c's PostgreSQL schema from
// the checkout, as the build does (generic blocks under PostgreSQL's own),
// and finds every block it runs, so a move of the SQL cannot break it
// unseen until the next benchmark.
func TestSchemaBlocks(t *testing.T) {
	schema, err := harness.RepoSQL("", sqlDir, "schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range []string{"tables", "keys", "analyze"} {
		if _, ok := schema[block]; !ok {
			t.Errorf("no block %q in %s's schema for PostgreSQL", block, sqlDir)
		}
	}
	if n := len(schema.Statements("tables")); n < len(allTables) {
		t.Errorf("%d table statements, want one per table (%d)", n, len(allTables))
	}
}

// TestParsePhases: the benchmark reads the build's phases from the line
// the build prints, and says so when there is none.
func TestParsePhases(t *testing.T) {
	out := "Built tproc-c: 2095893 rows, 431 MB in 5.3 s (393019 rows/s)\nPhases: tables 0.01 s, load 3.33 s, keys 0.95 s\n"
	got, err := parsePhases(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].Name != "load" || got[1].Seconds != 3.33 || got[2].Name != "keys" {
		t.Errorf("phases %+v", got)
	}
	if _, err := parsePhases("Built tproc-c\n"); err == nil {
		t.Error("no phases line: no error")
	}
}
