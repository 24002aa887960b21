package tprocc

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

const (
	// unusedItem is the item id a rolled-back New-Order asks for (clause
	// 2.4.1.5): one past the last item, so no row has it.
	unusedItem = items + 1
	// rollbackTimeout bounds the rollback after a failure whose context is
	// already done, so a dead connection cannot hold a session.
	rollbackTimeout = 5 * time.Second
	// sinkSize is enough throw-away columns for the widest row a
	// transaction reads only to display.
	sinkSize = 16
)

// txSQL is tx.sql resolved once per session, so a missing block fails
// at start-up rather than mid-run.
type txSQL struct {
	beginWrite, beginRead, commit, rollback string

	noCustomer, noOrder, noNewOrder, noItem, noLine string
	// New-Order's items, stock and order lines for all its lines at once,
	// where the dialect has these set forms (and noStocks); empty where it
	// has a statement a line.
	noItems, noLines string
	// New-Order's district update, order and new-order row in one
	// statement, where the dialect has it.
	noDistrictOrder               string
	payCustomerByName, payHistory string
	// Payment's history row with the names read on the server, where the
	// dialect has it.
	payHistoryNamed string
	// Payment's warehouse and district read at once, where the dialect
	// has it; then the writes of payWarehouse and payDistrict follow.
	payWarehouseDistrict                           string
	osCustomerByName, osCustomer, osOrder, osLines string
	dlPending, dlCustomer                          string
	// Delivery's customers updated at once, where the dialect has the set
	// forms (and dlOrders, dlOrderLines); empty where it has a statement a
	// district.
	dlCustomers         string
	slDistrict, slCount string

	// The statements that change rows and return them.
	noDistrict, noStock, payWarehouse, payDistrict, payCustomer, dlNewOrder, dlOrder, dlLines step
	// A dialect's set forms of steps, empty where it has none.
	noStocks, dlOrders, dlOrderLines step

	// The routine calls, only where the dialect has routines.
	callNewOrder, callPayment, callOrderStatus, callDelivery, callStockLevel string
}

// step is a statement that changes rows and returns what the transaction
// reads of them. A dialect without UPDATE ... RETURNING splits it in two:
// the block reads and locks the rows (SELECT ... FOR UPDATE), and the
// block write:<name>, run next with the same arguments, changes them.
type step struct{ q, write string }

func stepSQL(f workload.SQLFile, name string) step {
	return step{q: f.Get(name), write: f["write:"+name]}
}

// optionalStep is step name where the dialect has it, else empty.
func optionalStep(f workload.SQLFile, name string) step {
	return step{q: f[name], write: f["write:"+name]}
}

func loadTxSQL(f workload.SQLFile, procs bool) txSQL {
	q := txSQL{
		beginWrite: f.Get("begin_write"), beginRead: f.Get("begin_read"),
		commit: f.Get("commit"), rollback: f.Get("rollback"),

		noDistrict: stepSQL(f, "no_district"), noCustomer: f.Get("no_customer"), noOrder: f.Get("no_order"),
		noNewOrder: f.Get("no_new_order"), noItem: f.Get("no_item"), noStock: stepSQL(f, "no_stock"),
		noLine: f.Get("no_line"), noItems: f["no_items"], noDistrictOrder: f["no_district_order"], noStocks: optionalStep(f, "no_stocks"), noLines: f["no_lines"],

		payWarehouse: stepSQL(f, "pay_warehouse"), payDistrict: stepSQL(f, "pay_district"),
		payCustomerByName: f.Get("pay_customer_by_name"), payCustomer: stepSQL(f, "pay_customer"),
		payHistory: f.Get("pay_history"), payHistoryNamed: f["pay_history_named"], payWarehouseDistrict: f["pay_warehouse_district"],

		osCustomerByName: f.Get("os_customer_by_name"), osCustomer: f.Get("os_customer"),
		osOrder: f.Get("os_order"), osLines: f.Get("os_lines"),

		dlNewOrder: stepSQL(f, "dl_new_order"), dlPending: f.Get("dl_pending"), dlOrder: stepSQL(f, "dl_order"),
		dlLines: stepSQL(f, "dl_lines"), dlCustomer: f.Get("dl_customer"),
		dlOrders: optionalStep(f, "dl_orders"), dlOrderLines: optionalStep(f, "dl_order_lines"), dlCustomers: f["dl_customers"],

		slDistrict: f.Get("sl_district"), slCount: f.Get("sl_count"),
	}
	if procs {
		q.callNewOrder = f.Get("call:neword")
		q.callPayment = f.Get("call:payment")
		q.callOrderStatus = f.Get("call:ostat")
		q.callDelivery = f.Get("call:delivery")
		q.callStockLevel = f.Get("call:slev")
	}
	return q
}

// modeSQL is every statement of tx.sql that a session runs in its
// mode: the routine calls, or all the others.
func modeSQL(f workload.SQLFile, procs bool) []string {
	var out []string
	for _, name := range f.Named("") {
		if strings.HasPrefix(name, "call:") == procs {
			out = append(out, f[name])
		}
	}
	return out
}

// txImpl is each transaction type's input generator and its two
// implementations: client-side statements and one stored-routine call.
var txImpl = [...]struct {
	gen       func(*session, *terminal)
	sql, proc func(*session, context.Context, driver.Tally) error
}{
	txNewOrder:    {(*session).genNewOrder, (*session).newOrderSQL, (*session).newOrderProc},
	txPayment:     {(*session).genPayment, (*session).paymentSQL, (*session).paymentProc},
	txOrderStatus: {(*session).genOrderStatus, (*session).orderStatusSQL, (*session).orderStatusProc},
	txDelivery:    {(*session).genDelivery, (*session).deliverySQL, (*session).deliveryProc},
	txStockLevel:  {(*session).genStockLevel, (*session).stockLevelSQL, (*session).stockLevelProc},
}

// vu is one virtual user: a terminal with a session of its own, which
// runs its transactions by direct calls.
type vu struct {
	terminal
	*session
}

// newVU makes virtual user id (0-based) with a session of its own.
func newVU(ctx context.Context, t dbtarget.Target, cfg *runConfig, id int) (*vu, error) {
	s, err := openSession(ctx, t, cfg)
	if err != nil {
		return nil, err
	}
	return &vu{terminal: newTerminal(cfg, id), session: s}, nil
}

func (v *vu) Run(ctx context.Context, tx int, t driver.Tally) error {
	return v.session.run(ctx, &v.terminal, tx, t)
}

// queueStep adds a step that returns one row, scanning it into dest, to
// batch b, followed by its write where the dialect splits the step.
func queueStep(b []dbtarget.Query, st step, dest []any, optional bool, args ...any) []dbtarget.Query {
	return queueSplit(b, st, dbtarget.Query{Dest: dest, Optional: optional}, args)
}

// queueSplit adds step st with args to batch b, its rows read as q says,
// followed by its write where the dialect splits the step.
func queueSplit(b []dbtarget.Query, st step, q dbtarget.Query, args []any) []dbtarget.Query {
	q.SQL, q.Args = st.q, args
	b = append(b, q)
	if st.write != "" {
		b = append(b, dbtarget.Query{SQL: st.write, Args: args})
	}
	return b
}

// now is the transaction's timestamp, as the client sees it, in UTC like
// the loaded data.
func now() time.Time { return time.Now().UTC() }

// cents rounds an amount to the cent, as the money columns hold it.
func cents(x float64) float64 { return math.Round(x*100) / 100 }
