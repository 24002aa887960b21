package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
)

// TestCompareRefusesPart: a part of a split run is its share of the run,
// so compare refuses it, on either side, in one line that says to merge.
func TestCompareRefusesPart(t *testing.T) {
	dir := copyFixture(t, "run.json")
	whole := filepath.Join(dir, "run.json")
	d, err := result.Read(whole)
	if err != nil {
		t.Fatal(err)
	}
	d.Part = &result.Part{Index: 2, Of: 3, RunID: "7f3c1a2b-9d4e-4f00-8a11-0123456789ab", VUs: 1, Marker: true}
	part := filepath.Join(dir, "a.json")
	if err := result.Write(part, d); err != nil {
		t.Fatal(err)
	}
	want := part + " is part 2 of 3 of a split run: merge its parts first (dbrig merge)"
	wantIn(t, "stderr", usageError(t, dbrig(t, "compare", whole, part)), want)
	wantIn(t, "stderr", usageError(t, dbrig(t, "compare", part, whole)), want)
}
