package dvdstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// Streams of a virtual user's random numbers.
const (
	streamOrder = 0xD51
	streamThink = 0xD52
)

// Restocking: what a product low on stock gets back.
const (
	lowStock   = 3
	restock    = 250
	restockHot = 2500
)

// maxNameTries bounds the draws of a new customer's user name.
const maxNameTries = 20

// vu is one customer session after another on one connection. Next walks
// an order's steps: a login or a registration, the browses, the purchase.
type vu struct {
	workload.Conn
	cfg   *runConfig
	r     *workload.Rand
	think *workload.Rand

	// procs names the steps' stored-function calls ("call:") instead of
	// their statements.
	procs       bool
	prefix      string
	browsesLeft int
	customer    int64
	orderTime   time.Duration
	cart        []item
	vals        []any
}

type item struct {
	prod, qty int64
	price     float64
}

func newVU(ctx context.Context, t dbtarget.Target, cfg *runConfig, id int) (*vu, error) {
	seed := workload.Mix(cfg.seed, uint64(id))
	v := &vu{Conn: workload.Conn{T: t}, cfg: cfg, r: workload.NewRand(seed, streamOrder),
		think: workload.NewRand(seed, streamThink), vals: make([]any, len(customerColumns))}
	if cfg.mode == workload.ModeProcs {
		v.procs, v.prefix = true, "call:"
	}
	if err := v.Reconnect(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// upTo is 1 to 2n-1, uniform: a mean of n.
func (v *vu) upTo(n int) int { return v.r.Int(1, 2*n-1) }

func (v *vu) Next() int {
	switch {
	case v.customer == 0 && v.r.Int(1, 100) <= v.cfg.pctNew:
		return stepNewCustomer
	case v.customer == 0:
		return stepLogin
	case v.browsesLeft > 0:
		return stepBrowse
	}
	v.fillCart()
	return stepPurchase
}

func (v *vu) Run(ctx context.Context, step int, t driver.Tally) error {
	began := time.Now()
	var err error
	switch step {
	case stepLogin:
		err = v.login(ctx)
	case stepNewCustomer:
		err = v.newCustomer(ctx)
	case stepBrowse:
		err = v.browse(ctx)
	case stepPurchase:
		err = v.purchase(ctx, t)
	}
	v.orderTime += time.Since(began)
	if step == stepPurchase && (err == nil || errors.Is(err, driver.ErrRollback)) {
		t[tOrderUs] += v.orderTime.Microseconds()
		v.customer, v.orderTime = 0, 0
	}
	return err
}

// Pacing is the think time after an order.
func (v *vu) Pacing(step int) (before, after time.Duration) {
	if step != stepPurchase || v.cfg.think == 0 {
		return 0, 0
	}
	return 0, time.Duration(v.think.Float64() * 2 * float64(v.cfg.think))
}

// started begins an order's browsing for customer id.
func (v *vu) started(id int64) {
	v.customer, v.browsesLeft = id, v.upTo(v.cfg.searches)
}

func (v *vu) login(ctx context.Context) error {
	name := "user" + strconv.FormatInt(int64(v.r.Int(1, int(v.cfg.scale.Customers))), 10)
	var got int64
	var err error
	if v.procs {
		got, err = v.loginCall(ctx, name)
	} else if err = v.S.QueryRow(ctx, v.cfg.q.Get("login"), name, "password").Scan(&got); err == nil {
		err = v.discard(ctx, v.cfg.q.Get("history"), got)
	}
	switch {
	case err != nil && v.T.Classify(err) != dbtarget.ErrOther:
		return err
	case err != nil || got == 0:
		return fmt.Errorf("%w: log in as %s: no such customer (%v)", driver.ErrAbort, name, err)
	}
	v.started(got)
	return nil
}

// loginCall is the login in one call, which returns the customer's
// history too, the customer's id on every row.
func (v *vu) loginCall(ctx context.Context, name string) (int64, error) {
	rows, err := v.S.Query(ctx, v.cfg.q.Get("call:login"), name, "password")
	if err != nil {
		return 0, err
	}
	var id int64
	var title, actor, related any
	for rows.Next() {
		if err := rows.Scan(&id, &title, &actor, &related); err != nil {
			rows.Close()
			return 0, err
		}
	}
	rows.Close()
	return id, rows.Err()
}

// newCustomer registers a customer under a free name of the form
// newuser<N>, drawing N again while the name is taken.
func (v *vu) newCustomer(ctx context.Context) error {
	for range maxNameTries {
		n := int64(v.r.Int(1, int(v.cfg.scale.Customers)))
		customer(v.r.Uint64(), n%2+1, 2, v.vals)
		c := v.vals
		var id int64
		// A name taken is no row from the statement, 0 from the function.
		_, err := v.first(ctx, &id, v.cfg.q.Get(v.prefix+"new_customer"), c[1], c[2], c[3], c[5], c[6], c[7], c[8], c[9], c[10], c[11],
			c[12], c[13], c[14], "newuser"+strconv.FormatInt(n, 10), c[17], c[18], c[19])
		if err != nil {
			return err
		}
		if id != 0 {
			v.started(id)
			return nil
		}
	}
	return fmt.Errorf("no free user name in %d draws", maxNameTries)
}

func (v *vu) browse(ctx context.Context) error {
	batch := v.upTo(v.cfg.batch)
	var err error
	switch v.r.Int(0, 2) {
	case 0:
		err = v.discard(ctx, v.cfg.q.Get(v.prefix+"browse_category"), v.r.Int(1, len(categories)), batch)
	case 1:
		err = v.discard(ctx, v.cfg.q.Get(v.prefix+"browse_actor"), actor(v.r), batch)
	default:
		err = v.discard(ctx, v.cfg.q.Get(v.prefix+"browse_title"), words[v.r.Int(0, 999)]+" "+words[v.r.Int(0, 999)], batch)
	}
	if err == nil {
		v.browsesLeft--
	}
	return err
}

// purchase reads the cart's prices, then in one transaction adds the
// order, takes each line's stock (restocking what runs low) and writes its
// line and history. A product without the stock rolls the order back: an
// order counted, as the original counts it, but none added.
func (v *vu) purchase(ctx context.Context, t driver.Tally) error {
	q := v.cfg.q
	var net float64
	for i := range v.cart {
		if err := v.S.QueryRow(ctx, q.Get("price"), v.cart[i].prod).Scan(&v.cart[i].price); err != nil {
			return err
		}
		net += v.cart[i].price * float64(v.cart[i].qty)
	}
	net = math.Round(net*100) / 100
	tax := math.Round(net*8.25) / 100
	if v.procs {
		return v.purchaseCall(ctx, t, net, tax)
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if _, err := v.S.Exec(ctx, q.Get("begin_write")); err != nil {
		return err
	}
	var orderID int64
	if err := v.S.QueryRow(ctx, q.Get("new_order"), today, v.customer, net, tax, net+tax).Scan(&orderID); err != nil {
		return v.abort(ctx, err)
	}
	for i, it := range v.cart {
		var left int64
		found, err := v.first(ctx, &left, q.Get("take_stock"), it.prod, it.qty)
		switch {
		case err != nil:
			return v.abort(ctx, err)
		case !found:
			if err := v.abort(ctx, nil); err != nil {
				return err
			}
			return rolledBack(t)
		case left < lowStock:
			back := int64(restock)
			if it.prod%hotEvery == 0 {
				back = restockHot
			}
			if _, err := v.S.Exec(ctx, q.Get("reorder"), it.prod, today, left, back); err != nil {
				return v.abort(ctx, err)
			}
			if _, err := v.S.Exec(ctx, q.Get("restock"), it.prod, back); err != nil {
				return v.abort(ctx, err)
			}
		}
		if _, err := v.S.Exec(ctx, q.Get("order_line"), i+1, orderID, it.prod, it.qty, today); err != nil {
			return v.abort(ctx, err)
		}
		if _, err := v.S.Exec(ctx, q.Get("cust_hist"), v.customer, orderID, it.prod); err != nil {
			return v.abort(ctx, err)
		}
	}
	if _, err := v.S.Exec(ctx, q.Get("commit")); err != nil {
		return v.abort(ctx, err)
	}
	t[tOrders]++
	t[tLines] += int64(len(v.cart))
	return nil
}

// purchaseCall is the purchase in one call, which raises the target's
// intended rollback where a product is out of stock.
func (v *vu) purchaseCall(ctx context.Context, t driver.Tally, net, tax float64) error {
	prods, qtys := make([]int32, len(v.cart)), make([]int32, len(v.cart))
	for i, it := range v.cart {
		prods[i], qtys[i] = int32(it.prod), int32(it.qty)
	}
	var orderID int64
	err := v.S.QueryRow(ctx, v.cfg.q.Get("call:purchase"), v.customer, net, tax, net+tax, prods, qtys).Scan(&orderID)
	switch {
	case err != nil && v.T.Classify(err) == dbtarget.ErrUserRollback:
		return rolledBack(t)
	case err != nil:
		return err
	}
	t[tOrders]++
	t[tLines] += int64(len(v.cart))
	return nil
}

// rolledBack counts an order that found a product out of stock: an
// order made, none added.
func rolledBack(t driver.Tally) error {
	t[tOrders]++
	t[tRollbacks]++
	return driver.ErrRollback
}

// fillCart draws 1 to 2n-1 items, hot sellers ten times as likely, 1 to 3
// of each, in product order so that two orders lock shared rows in the
// same order and cannot deadlock.
func (v *vu) fillCart() {
	v.cart = v.cart[:0]
	for range v.upTo(v.cfg.lineItems) {
		v.cart = append(v.cart, item{prod: v.cfg.hot[v.r.Int(0, len(v.cfg.hot)-1)], qty: int64(v.r.Int(1, 3))})
	}
	slices.SortFunc(v.cart, func(a, b item) int { return int(a.prod - b.prod) })
}

// abort rolls the open transaction back after err, and returns err (or
// the rollback's own failure when err is nil). A done context must not
// stop it, or the session would stay in the transaction.
func (v *vu) abort(ctx context.Context, err error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, rerr := v.S.Exec(ctx, v.cfg.q.Get("rollback")); err == nil {
		return rerr
	}
	return err
}

// first runs a query whose result may be empty and scans its first row's
// one column into dest.
func (v *vu) first(ctx context.Context, dest any, sql string, args ...any) (bool, error) {
	rows, err := v.S.Query(ctx, sql, args...)
	if err != nil {
		return false, err
	}
	found := rows.Next()
	if found {
		err = rows.Scan(dest)
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	return found, err
}

// discard runs a query and reads its rows as a page would show them.
func (v *vu) discard(ctx context.Context, sql string, args ...any) error {
	rows, err := v.S.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}
