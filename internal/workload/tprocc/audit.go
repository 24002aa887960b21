package tprocc

import (
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// auditMinimum is the number of transactions below which the mix figures
// are too noisy to judge.
const auditMinimum = 10000

// audit checks the measured mix against TPC-C clause 9.2's bounds.
func audit(res *driver.Result, warehouses int) []workload.AuditItem {
	var all int64
	for _, tx := range res.Tx {
		all += tx.Count
	}
	t := res.Tally
	item := func(name string, part, whole int64, low, high float64, needsRemote bool) workload.AuditItem {
		a := workload.AuditItem{Name: name, Low: low, High: high}
		if whole > 0 {
			a.Value = float64(part) / float64(whole) * 100
		}
		switch {
		case all < auditMinimum:
			a.Result, a.Reason = "SKIP", "fewer than 10,000 transactions measured"
		case needsRemote && warehouses < 2:
			a.Result, a.Reason = "SKIP", "one warehouse: nothing is remote"
		case a.Value >= low && a.Value <= high:
			a.Result = "PASS"
		default:
			a.Result = "FAIL"
		}
		return a
	}
	return []workload.AuditItem{
		item("new_order_rollbacks", t[tRollbacks], t[tNewOrders], 0.9, 1.1, false),
		item("remote_order_lines", t[tRemoteLines], t[tOrderLines], 0.95, 1.05, true),
		item("remote_payments", t[tRemotePayments], t[tPayments], 14, 16, true),
		item("customers_by_last_name", t[tByLastName], t[tCustomerSelects], 57, 63, false),
	}
}
