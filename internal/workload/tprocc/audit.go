package tprocc

import (
	"fmt"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// auditMinimum is the number of transactions below which the mix figures
// are too noisy to judge.
const auditMinimum = 10000

// deckSize is the cards of each audited event's deck (see session): over
// each full deck its proportion is exact.
const deckSize = 100

// audit checks the measured mix against TPC-C clause 9.2's bounds.
// dealers is the sessions that dealt the audited events, a virtual
// user's own or a pool's; 0 when unknown.
//
// The events are dealt from each session's decks, exact over each full
// deck, and a window cuts every dealer's last deck short: with fewer
// than a deck's worth of draws a dealer, the pooled rate is as noisy as
// independent draws. Simulated for the rollbacks, 4,000 keyed terminals
// with ~1.2 New-Orders each: ±0.14% dealt per terminal (0.86% measured is
// one deviation, half the runs fail 0.9-1.1%), ±0.07% per session of a
// pool of 40. So a pool deals from the session, and an item with under a
// deck a dealer is SKIPped: pooling the tallies cannot restore the
// exactness that partial decks lost.
func audit(res *driver.Result, warehouses, dealers int) []workload.AuditItem {
	var all int64
	for _, tx := range res.Tx {
		all += tx.Count
	}
	t := res.Tally
	item := func(name, what string, part, whole int64, low, high float64, needsRemote bool) workload.AuditItem {
		a := workload.AuditItem{Name: name, Low: low, High: high}
		if whole > 0 {
			a.Value = float64(part) / float64(whole) * 100
		}
		switch {
		case all < auditMinimum:
			a.Result, a.Reason = "SKIP", "fewer than 10,000 transactions measured"
		case needsRemote && warehouses < 2:
			a.Result, a.Reason = "SKIP", "one warehouse: nothing is remote"
		case dealers > 0 && whole < deckSize*int64(dealers):
			a.Result, a.Reason = "SKIP", fmt.Sprintf("fewer than a deck (%d) per session: %.1f %s a session, too few for the dealt proportions to hold",
				deckSize, float64(whole)/float64(dealers), what)
		case a.Value >= low && a.Value <= high:
			a.Result = "PASS"
		default:
			a.Result = "FAIL"
		}
		return a
	}
	return []workload.AuditItem{
		item("new_order_rollbacks", "New-Orders", t[tRollbacks], t[tNewOrders], 0.9, 1.1, false),
		item("remote_order_lines", "order lines", t[tRemoteLines], t[tOrderLines], 0.95, 1.05, true),
		item("remote_payments", "Payments", t[tRemotePayments], t[tPayments], 14, 16, true),
		item("customers_by_last_name", "customer selections", t[tByLastName], t[tCustomerSelects], 57, 63, false),
	}
}
