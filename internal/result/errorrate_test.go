package result

import "testing"

// TestHoldErrors: the window's errors, with those in doubt, against its
// transactions, completed, failed or in doubt, held to the bound; a window
// in which none ended passes, and one in which every one failed is at
// 100%.
func TestHoldErrors(t *testing.T) {
	for _, c := range []struct {
		name          string
		txs           []Tx
		maxPct        float64
		pct           float64
		exceeded      bool
		errors, total int64
		inDoubt       int64
	}{
		{"none ended", []Tx{{Name: "a"}, {Name: "b"}}, 1, 0, false, 0, 0, 0},
		{"every one failed", []Tx{{Name: "a", Errors: 5}}, 1, 100, true, 5, 5, 0},
		{"every one failed, bound 100%", []Tx{{Name: "a", Errors: 5}}, 100, 100, false, 5, 5, 0},
		{"at the bound", []Tx{{Name: "a", Count: 60, Errors: 1}, {Name: "b", Count: 39}}, 1, 1, false, 1, 100, 0},
		{"past it", []Tx{{Name: "a", Count: 3345, Errors: 20000}, {Name: "b", Errors: 16199}}, 1, 100 * 36199.0 / 39544, true, 36199, 39544, 0},
		{"any, bound 0%", []Tx{{Name: "a", Count: 100000, Errors: 1}}, 0, 100 / 100001.0, true, 1, 100001, 0},
		{"in doubt with the errors", []Tx{{Name: "a", Count: 97, Errors: 1, InDoubt: 1}, {Name: "b", Count: 0, InDoubt: 1}}, 2, 3, true, 1, 100, 2},
		{"in doubt alone", []Tx{{Name: "a", Count: 99, InDoubt: 1}}, 1, 1, false, 0, 100, 1},
	} {
		e := HoldErrors(&Document{Transactions: c.txs}, c.maxPct)
		if e.Pct != c.pct || e.Exceeded != c.exceeded || e.Errors != c.errors || e.InDoubt != c.inDoubt || e.Transactions != c.total || e.MaxPct != c.maxPct {
			t.Errorf("%s: %+v, want %.4f%% of %d (%d errors), exceeded %v", c.name, e, c.pct, c.total, c.errors, c.exceeded)
		}
	}
}
