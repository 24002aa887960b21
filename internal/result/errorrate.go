package result

// DefaultMaxErrorPct is the bound a run's errors are held to unless told
// otherwise, in % of its window's transactions.
const DefaultMaxErrorPct = 1.0

// ErrorRate is the measured window's failed transactions against the
// bound the run held them to: a run whose transactions mostly failed
// measured its failures, not the system, and fails.
type ErrorRate struct {
	Errors int64 `json:"errors"`
	// InDoubt are the window's transactions whose commit was never
	// answered, which count with the errors: the client cannot tell that
	// they committed. Absent when none were, and in older documents.
	InDoubt int64 `json:"in_doubt,omitempty"`
	// Transactions are the window's that ended, completed, failed or in
	// doubt.
	Transactions int64   `json:"transactions"`
	Pct          float64 `json:"pct"`
	MaxPct       float64 `json:"max_pct"`
	// Exceeded is Pct past MaxPct: the run failed.
	Exceeded bool `json:"exceeded"`
}

// HoldErrors is d's window's errors, with its transactions in doubt,
// held to maxPct % of its transactions. A window in which no transaction
// ended, completed, failed or in doubt, has no rate and passes: nothing
// in it failed (a stall or a lost server says what happened to it
// instead); one whose every transaction failed is at 100%.
func HoldErrors(d *Document, maxPct float64) *ErrorRate {
	e := &ErrorRate{MaxPct: maxPct}
	for _, tx := range d.Transactions {
		e.Errors += tx.Errors
		e.InDoubt += tx.InDoubt
		e.Transactions += tx.Count + tx.Errors + tx.InDoubt
	}
	if e.Transactions > 0 {
		e.Pct = float64(e.Errors+e.InDoubt) * 100 / float64(e.Transactions)
	}
	e.Exceeded = e.Pct > maxPct
	return e
}
