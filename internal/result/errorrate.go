package result

// DefaultMaxErrorPct is the bound a run's errors are held to unless told
// otherwise, in % of its window's transactions.
const DefaultMaxErrorPct = 1.0

// ErrorRate is the measured window's failed transactions against the
// bound the run held them to: a run whose transactions mostly failed
// measured its failures, not the system, and fails.
type ErrorRate struct {
	Errors int64 `json:"errors"`
	// Transactions are the window's that ended, completed or failed.
	Transactions int64   `json:"transactions"`
	Pct          float64 `json:"pct"`
	MaxPct       float64 `json:"max_pct"`
	// Exceeded is Pct past MaxPct: the run failed.
	Exceeded bool `json:"exceeded"`
}

// HoldErrors is d's window's errors held to maxPct % of its transactions.
// A window in which no transaction ended, completed or failed, has no
// rate and passes: nothing in it failed (a stall or a lost server says
// what happened to it instead); one whose every transaction failed is at
// 100%.
func HoldErrors(d *Document, maxPct float64) *ErrorRate {
	e := &ErrorRate{MaxPct: maxPct}
	for _, tx := range d.Transactions {
		e.Errors += tx.Errors
		e.Transactions += tx.Count + tx.Errors
	}
	if e.Transactions > 0 {
		e.Pct = float64(e.Errors) * 100 / float64(e.Transactions)
	}
	e.Exceeded = e.Pct > maxPct
	return e
}
