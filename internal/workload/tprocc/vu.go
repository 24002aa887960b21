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

// The mix of clause 5.2.4.2, dealt from a deck: each hundred transactions
// a virtual user runs hold exactly this many of each type.
var mixCards = []int{txNewOrder: 45, txPayment: 43, txOrderStatus: 4, txDelivery: 4, txStockLevel: 4}

// keyingTime and thinkMean are the minimum keying times and mean think
// times of clause 5.2.5.7, by transaction type.
var (
	keyingTime = [...]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	thinkMean  = [...]float64{12, 12, 10, 5, 5}
)

const (
	// unusedItem is the item id a rolled-back New-Order asks for (clause
	// 2.4.1.5): one past the last item, so no row has it.
	unusedItem = items + 1
	// rollbackTimeout bounds the rollback after a failure whose context is
	// already done, so a dead connection cannot hold a virtual user.
	rollbackTimeout = 5 * time.Second
	// sinkSize is enough throw-away columns for the widest row a
	// transaction reads only to display.
	sinkSize = 16
)

// Streams of a virtual user's random numbers, so that turning pacing on
// or off does not change the transactions it generates.
const (
	streamInputs = 0x7C1
	streamPacing = 0x7C2
)

// vu is one virtual user: its own session, its deck, and the inputs of the
// transaction Next chose, kept so that a retried Run repeats them.
type vu struct {
	workload.Conn
	cfg   *runConfig
	q     txSQL
	procs bool
	r     *workload.Rand
	pace  *workload.Rand

	home  int // home warehouse
	slevD int // the district Stock-Level always looks at

	// Decks for the mix and for the events clause 9.2 audits, so their
	// proportions hold exactly over every hundred draws (see workload.Deck).
	mix, rollbacks, remoteLine, remotePay, byName workload.Deck

	no  newOrderInput
	pay paymentInput
	os  orderStatusInput
	dl  deliveryInput
	sl  stockLevelInput

	// ids collects the customers of a last name.
	ids []int
	// acks is this virtual user's part of the acknowledgement log, not
	// yet written (see ackLog).
	acks []byte

	// batch, and New-Order's per-line prices, districts' info and
	// places in the batch, are reused from one transaction to the next.
	batch  []dbtarget.Query
	prices []float64
	dists  []string
	at     []int

	// sink takes columns the transactions read, as a terminal would show
	// them, but do not use.
	sink     [sinkSize]any
	sinkDest [sinkSize]any
}

// txSQL is tx.sql resolved once per virtual user, so a missing block fails
// at start-up rather than mid-run.
type txSQL struct {
	beginWrite, beginRead, commit, rollback string

	noCustomer, noOrder, noNewOrder, noItem, noLine string
	payCustomerByName, payHistory                   string
	osCustomerByName, osCustomer, osOrder, osLines  string
	dlPending, dlCustomer                           string
	slDistrict, slCount                             string

	// The statements that change rows and return them.
	noDistrict, noStock, payWarehouse, payDistrict, payCustomer, dlNewOrder, dlOrder, dlLines step

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

func loadTxSQL(f workload.SQLFile, procs bool) txSQL {
	q := txSQL{
		beginWrite: f.Get("begin_write"), beginRead: f.Get("begin_read"),
		commit: f.Get("commit"), rollback: f.Get("rollback"),

		noDistrict: stepSQL(f, "no_district"), noCustomer: f.Get("no_customer"), noOrder: f.Get("no_order"),
		noNewOrder: f.Get("no_new_order"), noItem: f.Get("no_item"), noStock: stepSQL(f, "no_stock"),
		noLine: f.Get("no_line"),

		payWarehouse: stepSQL(f, "pay_warehouse"), payDistrict: stepSQL(f, "pay_district"),
		payCustomerByName: f.Get("pay_customer_by_name"), payCustomer: stepSQL(f, "pay_customer"),
		payHistory: f.Get("pay_history"),

		osCustomerByName: f.Get("os_customer_by_name"), osCustomer: f.Get("os_customer"),
		osOrder: f.Get("os_order"), osLines: f.Get("os_lines"),

		dlNewOrder: stepSQL(f, "dl_new_order"), dlPending: f.Get("dl_pending"), dlOrder: stepSQL(f, "dl_order"),
		dlLines: stepSQL(f, "dl_lines"), dlCustomer: f.Get("dl_customer"),

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

// newVU makes virtual user id (0-based) with a session of its own.
func newVU(ctx context.Context, t dbtarget.Target, cfg *runConfig, id int) (*vu, error) {
	procs := cfg.Mode == workload.ModeProcs
	c := workload.Conn{T: t, Prepare: modeSQL(cfg.Q, procs)}
	if err := c.Reconnect(ctx); err != nil {
		return nil, err
	}
	seed := workload.Mix(cfg.Seed, uint64(id))
	v := &vu{
		Conn: c, cfg: cfg,
		q:     loadTxSQL(cfg.Q, procs),
		procs: procs,
		r:     workload.NewRand(seed, streamInputs),
		pace:  workload.NewRand(seed, streamPacing),
		home:  id%cfg.Warehouses + 1,
		slevD: (id/cfg.Warehouses)%districtsPerWH + 1,
	}
	v.mix = workload.NewDeck(mixCards...)
	v.rollbacks = workload.NewDeck(99, 1)  // 1% of New-Orders roll back
	v.remoteLine = workload.NewDeck(99, 1) // 1% of order lines are remote
	v.remotePay = workload.NewDeck(85, 15) // 15% of Payments are remote
	v.byName = workload.NewDeck(40, 60)    // 60% of customers by last name
	for i := range v.sinkDest {
		v.sinkDest[i] = &v.sink[i]
	}
	return v, nil
}

// modeSQL is every statement of tx.sql that a virtual user runs in its
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
	gen       func(*vu)
	sql, proc func(*vu, context.Context, driver.Tally) error
}{
	txNewOrder:    {(*vu).genNewOrder, (*vu).newOrderSQL, (*vu).newOrderProc},
	txPayment:     {(*vu).genPayment, (*vu).paymentSQL, (*vu).paymentProc},
	txOrderStatus: {(*vu).genOrderStatus, (*vu).orderStatusSQL, (*vu).orderStatusProc},
	txDelivery:    {(*vu).genDelivery, (*vu).deliverySQL, (*vu).deliveryProc},
	txStockLevel:  {(*vu).genStockLevel, (*vu).stockLevelSQL, (*vu).stockLevelProc},
}

// Next deals the next transaction type and draws its inputs.
func (v *vu) Next() int {
	tx := v.mix.Deal(v.r)
	txImpl[tx].gen(v)
	return tx
}

func (v *vu) Run(ctx context.Context, tx int, t driver.Tally) error {
	if v.procs {
		return txImpl[tx].proc(v, ctx, t)
	}
	return txImpl[tx].sql(v, ctx, t)
}

// Pacing: the keying time is fixed, the think time exponential; none
// unless the run asked for them.
func (v *vu) Pacing(tx int) (keying, think time.Duration) {
	if !v.cfg.Keying {
		return 0, 0
	}
	return keyingTime[tx], time.Duration(v.pace.Exp(thinkMean[tx]) * float64(time.Second))
}

// warehouse is the warehouse of the next transaction: the home warehouse,
// or with AllWarehouses any of them.
func (v *vu) warehouse() int {
	if v.cfg.AllWarehouses {
		return v.r.Int(1, v.cfg.Warehouses)
	}
	return v.home
}

// otherWarehouse is uniform over the warehouses other than w; there must
// be at least two.
func (v *vu) otherWarehouse(w int) int {
	o := v.r.Int(1, v.cfg.Warehouses-1)
	if o >= w {
		o++
	}
	return o
}

// customer draws how Payment and Order-Status pick their customer (clauses
// 2.5.1.2 and 2.6.1.2): 60% by last name, else by id.
func (v *vu) customer() (byName bool, last string, id int) {
	if v.byName.Deal(v.r) == 1 {
		return true, lastName(v.r.NURand(255, 0, 999, v.cfg.C.Last)), 0
	}
	return false, "", v.r.NURand(1023, 1, customersPerDist, v.cfg.C.ID)
}

// abort rolls the open transaction back after err, and returns err.
func (v *vu) abort(ctx context.Context, err error) error {
	v.rollback(ctx)
	return err
}

// rollback rolls the open transaction back. A done context must not stop
// it, or the session would stay in the transaction.
func (v *vu) rollback(ctx context.Context) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
	}
	_, err := v.S.Exec(ctx, v.q.rollback)
	return err
}

// queueStep adds a step that returns one row, scanning it into dest, to
// batch b, followed by its write where the dialect splits the step.
func queueStep(b []dbtarget.Query, st step, dest []any, optional bool, args ...any) []dbtarget.Query {
	b = append(b, dbtarget.Query{SQL: st.q, Args: args, Dest: dest, Optional: optional})
	if st.write != "" {
		b = append(b, dbtarget.Query{SQL: st.write, Args: args})
	}
	return b
}

// send runs batch b, which may open the transaction or commit it,
// rolling the transaction back on any error: SQLite, for one, leaves a
// transaction open after a busy COMMIT.
func (v *vu) send(ctx context.Context, b []dbtarget.Query) error {
	if err := dbtarget.RunBatch(ctx, v.S, b); err != nil {
		return v.abort(ctx, err)
	}
	return nil
}

// write runs a step's write, where the dialect splits the step.
func (v *vu) write(ctx context.Context, st step, args []any) error {
	if st.write == "" {
		return nil
	}
	_, err := v.S.Exec(ctx, st.write, args...)
	return err
}

// discard returns n destinations for columns read only to be shown.
func (v *vu) discard(n int) []any { return v.sinkDest[:n] }

// first runs a query whose result may be empty and scans its first row
// into dest.
func (v *vu) first(ctx context.Context, dest []any, sql string, args ...any) (found bool, err error) {
	rows, err := v.S.Query(ctx, sql, args...)
	if err != nil {
		return false, err
	}
	if rows.Next() {
		found = true
		err = rows.Scan(dest...)
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	return found, err
}

// now is the transaction's timestamp, as the client sees it, in UTC like
// the loaded data.
func now() time.Time { return time.Now().UTC() }

// cents rounds an amount to the cent, as the money columns hold it.
func cents(x float64) float64 { return math.Round(x*100) / 100 }
