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

// Restocking: what a product low on stock gets back.
const (
	lowStock   = 3
	restock    = 250
	restockHot = 2500
)

// maxNameTries bounds the draws of a new customer's user name.
const maxNameTries = 20

// session is one connection, and the inputs of the step it runs: drawn
// from the terminal's stream on the step's first attempt, so that a retry
// repeats them.
type session struct {
	workload.Conn
	cfg *runConfig
	// procs names the steps' stored-function calls ("call:") instead of
	// their statements.
	procs  bool
	prefix string
	vals   []any

	// user is the customer number a login or a registration names, and
	// details the seed of a new customer's details.
	user    int64
	details uint64
	// A browse's: what it searches by, for how many rows, in which
	// category or for which actor or title.
	by, batch, category int
	search              string
	cart                []item
}

type item struct {
	prod, qty int64
	price     float64
}

func openSession(ctx context.Context, t dbtarget.Target, cfg *runConfig) (*session, error) {
	s := &session{Conn: workload.Conn{T: t}, cfg: cfg, vals: make([]any, len(customerColumns))}
	if cfg.mode == workload.ModeProcs {
		s.procs, s.prefix = true, "call:"
	}
	if err := s.Reconnect(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Run is a pool's: it lends the session to terminal term, one of this
// workload's own.
func (s *session) Run(ctx context.Context, term driver.Terminal, step int, t driver.Tally) error {
	return s.run(ctx, term.(*terminal), step, t)
}

// run runs step of terminal tm, which Next chose, with VU.Run's contract:
// the first attempt draws its inputs, from the terminal's stream; a
// retry, which the driver makes on the same session, repeats them. A
// virtual user calls it directly, a pool's driver through Run.
func (s *session) run(ctx context.Context, tm *terminal, step int, t driver.Tally) error {
	began := time.Now()
	s.inputs(tm, step)
	var err error
	switch step {
	case stepLogin:
		err = s.login(ctx, tm)
	case stepNewCustomer:
		err = s.newCustomer(ctx, tm)
	case stepBrowse:
		err = s.browse(ctx, tm)
	case stepPurchase:
		err = s.purchase(ctx, tm, t)
	}
	tm.orderTime += time.Since(began)
	if step == stepPurchase && (err == nil || errors.Is(err, driver.ErrRollback)) {
		t[tOrderUs] += tm.orderTime.Microseconds()
		tm.customer, tm.orderTime = 0, 0
	}
	return err
}

// inputs draws the inputs of step, which terminal tm chose, if they are
// not drawn yet, in the order the steps drew them before issue 22 split
// the virtual user.
func (s *session) inputs(tm *terminal, step int) {
	if !tm.fresh {
		return
	}
	tm.fresh = false
	r := &tm.r
	switch step {
	case stepLogin:
		s.user = int64(r.Int(1, int(s.cfg.scale.Customers)))
	case stepNewCustomer:
		s.user, s.details = int64(r.Int(1, int(s.cfg.scale.Customers))), r.Uint64()
	case stepBrowse:
		s.batch, s.by = tm.upTo(s.cfg.batch), r.Int(0, 2)
		switch s.by {
		case 0:
			s.category = r.Int(1, len(categories))
		case 1:
			s.search = actor(r)
		default:
			s.search = words[r.Int(0, 999)] + " " + words[r.Int(0, 999)]
		}
	case stepPurchase:
		s.fillCart(tm)
	}
}

func (s *session) login(ctx context.Context, tm *terminal) error {
	name := "user" + strconv.FormatInt(s.user, 10)
	var got int64
	var err error
	if s.procs {
		got, err = s.loginCall(ctx, name)
	} else if err = s.S.QueryRow(ctx, s.cfg.q.Get("login"), name, "password").Scan(&got); err == nil {
		err = s.discard(ctx, s.cfg.q.Get("history"), got)
	}
	switch {
	case err != nil && s.T.Classify(err) != dbtarget.ErrOther:
		return err
	case err != nil || got == 0:
		return fmt.Errorf("%w: log in as %s: no such customer (%v)", driver.ErrAbort, name, err)
	}
	tm.started(got)
	return nil
}

// loginCall is the login in one call, which returns the customer's
// history too, the customer's id on every row.
func (s *session) loginCall(ctx context.Context, name string) (int64, error) {
	rows, err := s.S.Query(ctx, s.cfg.q.Get("call:login"), name, "password")
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
func (s *session) newCustomer(ctx context.Context, tm *terminal) error {
	n, details := s.user, s.details
	for try := range maxNameTries {
		if try > 0 {
			n, details = int64(tm.r.Int(1, int(s.cfg.scale.Customers))), tm.r.Uint64()
		}
		customer(details, n%2+1, 2, s.vals)
		c := s.vals
		var id int64
		// A name taken is no row from the statement, 0 from the function.
		_, err := s.first(ctx, &id, s.cfg.q.Get(s.prefix+"new_customer"), c[1], c[2], c[3], c[5], c[6], c[7], c[8], c[9], c[10], c[11],
			c[12], c[13], c[14], "newuser"+strconv.FormatInt(n, 10), c[17], c[18], c[19])
		if err != nil {
			// The registration commits as it runs (autocommit).
			return s.Committing(err)
		}
		if id != 0 {
			tm.started(id)
			return nil
		}
	}
	return fmt.Errorf("no free user name in %d draws", maxNameTries)
}

func (s *session) browse(ctx context.Context, tm *terminal) error {
	var err error
	switch s.by {
	case 0:
		err = s.discard(ctx, s.cfg.q.Get(s.prefix+"browse_category"), s.category, s.batch)
	case 1:
		err = s.discard(ctx, s.cfg.q.Get(s.prefix+"browse_actor"), s.search, s.batch)
	default:
		err = s.discard(ctx, s.cfg.q.Get(s.prefix+"browse_title"), s.search, s.batch)
	}
	if err == nil {
		tm.browsesLeft--
	}
	return err
}

// purchase reads the cart's prices, then in one transaction adds the
// order, takes each line's stock (restocking what runs low) and writes its
// line and history. A product without the stock rolls the order back: an
// order counted, as the original counts it, but none added.
func (s *session) purchase(ctx context.Context, tm *terminal, t driver.Tally) error {
	q := s.cfg.q
	var net float64
	for i := range s.cart {
		if err := s.S.QueryRow(ctx, q.Get("price"), s.cart[i].prod).Scan(&s.cart[i].price); err != nil {
			return err
		}
		net += s.cart[i].price * float64(s.cart[i].qty)
	}
	net = math.Round(net*100) / 100
	tax := math.Round(net*8.25) / 100
	if s.procs {
		return s.purchaseCall(ctx, tm.customer, t, net, tax)
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if _, err := s.S.Exec(ctx, q.Get("begin_write")); err != nil {
		return err
	}
	var orderID int64
	if err := s.S.QueryRow(ctx, q.Get("new_order"), today, tm.customer, net, tax, net+tax).Scan(&orderID); err != nil {
		return s.abort(ctx, err)
	}
	for i, it := range s.cart {
		var left int64
		found, err := s.first(ctx, &left, q.Get("take_stock"), it.prod, it.qty)
		switch {
		case err != nil:
			return s.abort(ctx, err)
		case !found:
			if err := s.abort(ctx, nil); err != nil {
				return err
			}
			return rolledBack(t)
		}
		if s.cfg.takeWrite != "" {
			if _, err := s.S.Exec(ctx, s.cfg.takeWrite, it.prod, it.qty); err != nil {
				return s.abort(ctx, err)
			}
		}
		if left < lowStock {
			back := int64(restock)
			if it.prod%hotEvery == 0 {
				back = restockHot
			}
			if _, err := s.S.Exec(ctx, q.Get("reorder"), it.prod, today, left, back); err != nil {
				return s.abort(ctx, err)
			}
			if _, err := s.S.Exec(ctx, q.Get("restock"), it.prod, back); err != nil {
				return s.abort(ctx, err)
			}
		}
		if _, err := s.S.Exec(ctx, q.Get("order_line"), i+1, orderID, it.prod, it.qty, today); err != nil {
			return s.abort(ctx, err)
		}
		if _, err := s.S.Exec(ctx, q.Get("cust_hist"), tm.customer, orderID, it.prod); err != nil {
			return s.abort(ctx, err)
		}
	}
	if _, err := s.S.Exec(ctx, q.Get("commit")); err != nil {
		return s.Committing(s.abort(ctx, err))
	}
	t[tOrders]++
	t[tLines] += int64(len(s.cart))
	return nil
}

// purchaseCall is the purchase in one call, which raises the target's
// intended rollback where a product is out of stock.
func (s *session) purchaseCall(ctx context.Context, customer int64, t driver.Tally, net, tax float64) error {
	prods, qtys := make([]int32, len(s.cart)), make([]int32, len(s.cart))
	for i, it := range s.cart {
		prods[i], qtys[i] = int32(it.prod), int32(it.qty)
	}
	var orderID int64
	err := s.S.QueryRow(ctx, s.cfg.q.Get("call:purchase"), customer, net, tax, net+tax, prods, qtys).Scan(&orderID)
	switch {
	case err != nil && s.T.Classify(err) == dbtarget.ErrUserRollback:
		return rolledBack(t)
	case err != nil:
		return s.Committing(err)
	}
	t[tOrders]++
	t[tLines] += int64(len(s.cart))
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
func (s *session) fillCart(tm *terminal) {
	s.cart = s.cart[:0]
	for range tm.upTo(s.cfg.lineItems) {
		s.cart = append(s.cart, item{prod: s.cfg.hot[tm.r.Int(0, len(s.cfg.hot)-1)], qty: int64(tm.r.Int(1, 3))})
	}
	slices.SortFunc(s.cart, func(a, b item) int { return int(a.prod - b.prod) })
}

// abort rolls the open transaction back after err, and returns err (or
// the rollback's own failure when err is nil). A done context must not
// stop it, or the session would stay in the transaction.
func (s *session) abort(ctx context.Context, err error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, rerr := s.S.Exec(ctx, s.cfg.q.Get("rollback")); err == nil {
		return rerr
	}
	return err
}

// first runs a query whose result may be empty and scans its first row's
// one column into dest.
func (s *session) first(ctx context.Context, dest any, sql string, args ...any) (bool, error) {
	rows, err := s.S.Query(ctx, sql, args...)
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
func (s *session) discard(ctx context.Context, sql string, args ...any) error {
	rows, err := s.S.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}
