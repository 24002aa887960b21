package tprocc

import (
	"context"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// session is a connection and what a transaction needs beside its
// terminal: the statements, the decks of the events clause 9.2 audits,
// the inputs of the transaction in hand, kept so that a retried Run
// repeats them, and the buffers reused from one transaction to the next.
// A virtual user has one of its own; a pool lends one to many terminals
// (issue 22).
type session struct {
	workload.Conn
	cfg   *runConfig
	q     txSQL
	procs bool

	// Decks for the events clause 9.2 audits, so their proportions hold
	// exactly over every hundred draws (see workload.Deck). They are the
	// session's, not the terminal's: a keyed terminal makes about one
	// New-Order a minute, too few for a deck a window, while a session of
	// a pool deals hundreds (see audit). The input stream of the terminal
	// in hand shuffles them, as a virtual user's always has: so in a pool
	// a terminal's inputs depend on the sessions that serve it.
	rollbacks, remoteLine, remotePay, byName workload.Deck

	no  newOrderInput
	pay paymentInput
	os  orderStatusInput
	dl  deliveryInput
	sl  stockLevelInput

	// ids collects the customers of a last name.
	ids []int
	// acks is this session's part of the acknowledgement log, not yet
	// written (see ackLog).
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

// openSession opens a session of a run on t.
func openSession(ctx context.Context, t dbtarget.Target, cfg *runConfig) (*session, error) {
	procs := cfg.Mode == workload.ModeProcs
	s := &session{
		Conn: workload.Conn{T: t, Prepare: modeSQL(cfg.Q, procs)},
		cfg:  cfg, q: loadTxSQL(cfg.Q, procs), procs: procs,
		rollbacks:  workload.NewDeck(99, 1),  // 1% of New-Orders roll back
		remoteLine: workload.NewDeck(99, 1),  // 1% of order lines are remote
		remotePay:  workload.NewDeck(85, 15), // 15% of Payments are remote
		byName:     workload.NewDeck(40, 60), // 60% of customers by last name
	}
	if err := s.Reconnect(ctx); err != nil {
		return nil, err
	}
	for i := range s.sinkDest {
		s.sinkDest[i] = &s.sink[i]
	}
	return s, nil
}

// run runs transaction tx of terminal tm, which Next chose, with
// VU.Run's contract: the first attempt draws its inputs, from the
// terminal's stream and this session's decks; a retry, which the driver
// makes on the same session, repeats them. A virtual user calls it
// directly, a pool's driver through pooled.Run.
func (v *session) run(ctx context.Context, tm *terminal, tx int, t driver.Tally) error {
	v.inputs(tm, tx)
	if v.procs {
		return txImpl[tx].proc(v, ctx, t)
	}
	return txImpl[tx].sql(v, ctx, t)
}

// inputs draws the inputs of transaction tx, which terminal tm chose, if
// they are not drawn yet.
func (v *session) inputs(tm *terminal, tx int) {
	if tm.fresh {
		txImpl[tx].gen(v, tm)
		tm.fresh = false
	}
}

// customer draws how Payment and Order-Status pick their customer (clauses
// 2.5.1.2 and 2.6.1.2): 60% by last name, else by id.
func (v *session) customer(tm *terminal) (byName bool, last string, id int) {
	if v.byName.Deal(&tm.r) == 1 {
		return true, lastName(tm.r.NURand(255, 0, 999, v.cfg.C.Last)), 0
	}
	return false, "", tm.r.NURand(1023, 1, customersPerDist, v.cfg.C.ID)
}

// abort rolls the open transaction back after err, and returns err.
func (v *session) abort(ctx context.Context, err error) error {
	v.rollback(ctx)
	return err
}

// rollback rolls the open transaction back. A done context must not stop
// it, or the session would stay in the transaction.
func (v *session) rollback(ctx context.Context) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
	}
	_, err := v.S.Exec(ctx, v.q.rollback)
	return err
}

// send runs batch b, which may open the transaction or commit it,
// rolling the transaction back on any error: SQLite, for one, leaves a
// transaction open after a busy COMMIT.
func (v *session) send(ctx context.Context, b []dbtarget.Query) error {
	if err := dbtarget.RunBatch(ctx, v.S, b); err != nil {
		return v.abort(ctx, err)
	}
	return nil
}

// write runs a step's write, where the dialect splits the step.
func (v *session) write(ctx context.Context, st step, args []any) error {
	if st.write == "" {
		return nil
	}
	_, err := v.S.Exec(ctx, st.write, args...)
	return err
}

// discard returns n destinations for columns read only to be shown.
func (v *session) discard(n int) []any { return v.sinkDest[:n] }

// first runs a query whose result may be empty and scans its first row
// into dest.
func (v *session) first(ctx context.Context, dest []any, sql string, args ...any) (found bool, err error) {
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
