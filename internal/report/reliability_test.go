package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
)

// TestInDoubtShown: the summary's per-type table has an in-doubt column
// where a run had some (a kill left 3 New-Orders and a Delivery in doubt),
// none where it had none, and compare sets them side by side per type,
// only for a type where either run had some.
func TestInDoubtShown(t *testing.T) {
	killed, err := Load("testdata/durability-run.json")
	if err != nil {
		t.Fatal(err)
	}
	quiet, err := Load("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Text(&b, killed.Run)
	head, rows, _ := strings.Cut(b.String(), "\n")
	if !strings.Contains(head, "errors  in doubt  retries") || !strings.Contains(rows, "In doubt in the measured window: 4 (new_order 3, delivery 1)") {
		t.Errorf("summary of a run with transactions in doubt:\n%s", b.String())
	}
	for _, l := range strings.Split(rows, "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[0] == "new_order" && f[4] != "3" {
			t.Errorf("new_order's row %q, want 3 in doubt", l)
		}
	}
	b.Reset()
	Text(&b, quiet.Run)
	if strings.Contains(b.String(), "in doubt") {
		t.Errorf("summary of a run with none in doubt names them:\n%s", b.String())
	}

	c, err := Compare(killed, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if r := find(c, "new_order", "in_doubt"); r.A != 3 || r.B != 0 || !r.LowerIsBetter || !r.Count {
		t.Errorf("new_order in doubt compared %+v, want 3 and 0, a count, lower better", r)
	}
	if r := find(c, "payment", "in_doubt"); !math.IsNaN(r.A) {
		t.Errorf("payment, in doubt in neither run, compared: %+v", r)
	}
}

// TestErrorRateLineInDoubt: a run failed on its error rate says how many
// of the transactions it counted were in doubt.
func TestErrorRateLineInDoubt(t *testing.T) {
	for _, c := range []struct {
		e    result.ErrorRate
		want string
	}{
		{result.ErrorRate{Errors: 1, InDoubt: 2, Transactions: 100, Pct: 3, MaxPct: 1, Exceeded: true},
			"FAILED: error rate 3.0%: 3 of the window's 100 transactions failed or were in doubt (2 in doubt, which nobody knows to have committed), over the bound of 1% (--max-error-rate)."},
		{result.ErrorRate{Errors: 3, Transactions: 100, Pct: 3, MaxPct: 1, Exceeded: true},
			"FAILED: error rate 3.0%: 3 of the window's 100 transactions failed, over the bound of 1% (--max-error-rate)."},
	} {
		if got := errorRateLine(&result.Document{ErrorRate: &c.e}); got != c.want {
			t.Errorf("%+v:\n%s\nwant\n%s", c.e, got, c.want)
		}
	}
}
