//go:build linux

package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// TestBouncerNamedStatements: through pgbouncer in transaction mode, a
// session's statement prepared by name fails once another client's
// transaction holds the server connection that prepared it, and the error
// says what to do; with default_query_exec_mode=exec the same sequence
// runs, and so do the statements of TestExecModes.
func TestBouncerNamedStatements(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, _ := modeDB(ctx, t)
	bounced := pgtest.Bouncer(t, url, 4)
	for _, mode := range []string{"", "exec"} {
		tg, err := Open(ctx, withMode(bounced, mode))
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		err = elsewhere(ctx, t, tg)
		t.Logf("mode %q: %v", mode, err)
		switch {
		case mode == "" && (err == nil || !strings.Contains(err.Error(), "add default_query_exec_mode=exec to the URL") ||
			!errors.As(err, new(*exitcode.UserError)) || tg.Classify(err) != dbtarget.ErrOther):
			t.Errorf("default mode through pgbouncer: %v (class %v); want the statement missing, what to do, the user's to fix, "+
				"and the transaction's failure", err, tg.Classify(err))
		case mode != "" && err != nil:
			t.Errorf("mode %s through pgbouncer: %v", mode, err)
		}
		if mode != "" {
			s, err := tg.Session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			runModeStatements(ctx, t, s)
			s.Close()
		}
	}
}

// elsewhere prepares a statement on a session of tg, has another session
// hold the server connection it was prepared on in a transaction, and
// runs the statement.
func elsewhere(ctx context.Context, t *testing.T, tg dbtarget.Target) error {
	t.Helper()
	a, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const sql = "SELECT $1::int + 1"
	if err := a.(dbtarget.Preparer).Prepare(ctx, sql); err != nil {
		t.Fatal(err)
	}
	// pgbouncer lends the server connection used last: a's.
	if _, err := b.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	defer b.Exec(ctx, "ROLLBACK")
	var n int
	if err := a.QueryRow(ctx, sql, 1).Scan(&n); err != nil {
		return err
	}
	if n != 2 {
		t.Errorf("%s with 1: %d", sql, n)
	}
	return nil
}

// TestBouncerFlushReachesEveryConnection: behind pgbouncer the target
// knows it is behind a pooler (and directly that it is not), and the
// sessions' flushes at an edge publish the transactions of every server
// connection that ran theirs, though each ran its last within the second
// in which PostgreSQL publishes no more: the database counts them all at
// once.
func TestBouncerFlushReachesEveryConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, direct := modeDB(ctx, t)
	bounced := pgtest.Bouncer(t, url, 4)
	if direct.(*Target).pooler {
		t.Fatal("directly: a pooler found")
	}
	tg, err := Open(ctx, withMode(bounced, "exec"))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if !tg.(*Target).pooler {
		t.Fatal("through pgbouncer: no pooler found")
	}
	ss := make([]dbtarget.Session, 3)
	for i := range ss {
		if ss[i], err = tg.Session(ctx); err != nil {
			t.Fatal(err)
		}
		defer ss[i].Close()
	}
	flushAll := func() {
		t.Helper()
		errs := make(chan error, len(ss))
		// They come to an edge a little apart, as sessions finishing
		// their transactions do: each flush alone would be done before
		// the next came, and pgbouncer would lend them all the server
		// connection used last.
		for i, s := range ss {
			go func() {
				time.Sleep(time.Duration(i) * 50 * time.Millisecond)
				errs <- s.(dbtarget.Flusher).Flush(ctx)
			}()
		}
		for range ss {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	flushAll()
	before, _, err := tg.Xacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Two rounds of a transaction on each session, the three open at once,
	// so on three server connections; the first round's is published as
	// each goes idle, the second's waits for the flush.
	for round := range 2 {
		for i, s := range ss {
			if _, err := s.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(ctx, "INSERT INTO kv VALUES ($1, 1)", round*len(ss)+i); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range ss {
			if _, err := s.Exec(ctx, "COMMIT"); err != nil {
				t.Fatal(err)
			}
		}
	}
	flushAll()
	after, _, err := tg.Xacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Autovacuum's visits to the database may add one or two.
	if n := after - before; n < 6 || n > 8 {
		t.Errorf("the database counted %d transactions; want the sessions' 6", n)
	}
}
