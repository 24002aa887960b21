// Package tprocc is a workload derived from TPC-C (clauses 1-4 of the
// specification): the nine tables, the loader, the five transactions, the
// consistency conditions and the mix audit. It is not a TPC-C result and
// must not be reported as one.
package tprocc

import (
	"embed"

	"github.com/dbrig/dbrig/internal/workload"
)

//go:embed sql
var sqlFiles embed.FS

// Name is the workload's name on the command line.
const Name = "tproc-c"

// layout is the schema's version, stored in dbrig_tprocc at build time. A
// run refuses a schema built with another layout.
const layout = 1

// Transaction types, in the order of the names the driver reports.
const (
	txNewOrder = iota
	txPayment
	txOrderStatus
	txDelivery
	txStockLevel
)

var txNames = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// Tally slots: what a transaction reports for the mix audit.
const (
	tNewOrders       = iota // New-Orders attempted (committed or rolled back)
	tRollbacks              // New-Orders rolled back on the unused item
	tOrderLines             // order lines in committed New-Orders
	tRemoteLines            // of which supplied by another warehouse
	tPayments               // Payments committed
	tRemotePayments         // of which for a customer of another warehouse
	tCustomerSelects        // Payment and Order-Status customer selections
	tByLastName             // of which by last name
)

var tallyNames = []string{"new_orders", "rollbacks", "order_lines", "remote_order_lines",
	"payments", "remote_payments", "customer_selections", "by_last_name"}

// cRun holds the run-time NURand constants C (clause 2.1.6). cLast must
// differ from the load-time constant per clause 2.1.6.1.
type cRun struct {
	Last, ID, ItemID int
}

// runConfig is what every virtual user of a run shares, read-only.
type runConfig struct {
	Warehouses    int
	Mode          string
	AllWarehouses bool
	Keying        bool
	// PerWarehouse is the terminals a warehouse may have in a keyed run:
	// the specification's 10, or more for a scale test.
	PerWarehouse int
	Seed         uint64
	C            cRun
	// Q holds tx.sql's blocks as the target's dialect has them.
	Q workload.SQLFile
	// Acks, when set, is where the virtual users log the New-Orders the
	// database acknowledged (the durability audit).
	Acks *ackLog
}
