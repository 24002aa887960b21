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
