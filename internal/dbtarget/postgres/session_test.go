//go:build unix

package postgres

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// newSession opens a database of the test's own and one session on it,
// with a minute to do its work; all are closed when the test ends.
func newSession(t *testing.T) (context.Context, dbtarget.Target, dbtarget.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	tg, err := Open(ctx, pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ctx, tg, s
}

// TestIntendedRollbackKeepsItsStatement: a routine's intended rollback
// (SQLSTATE DR001, an error) leaves the statement prepared; the next call
// runs it without preparing it again.
func TestIntendedRollbackKeepsItsStatement(t *testing.T) {
	ctx, tg, s := newSession(t)
	if _, err := s.Exec(ctx, `CREATE FUNCTION roll(n int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	IF n < 0 THEN RAISE EXCEPTION 'rolled back' USING ERRCODE = 'DR001'; END IF;
	RETURN n;
END $$`); err != nil {
		t.Fatal(err)
	}
	prepared := func() (n int, at time.Time) {
		t.Helper()
		if err := s.QueryRow(ctx, "SELECT count(*), max(prepare_time) FROM pg_prepared_statements WHERE statement = 'SELECT roll($1)'").Scan(&n, &at); err != nil {
			t.Fatal(err)
		}
		return n, at
	}
	var got int
	for i, arg := range []int{-1, 3, -1, 4} {
		err := s.QueryRow(ctx, "SELECT roll($1)", arg).Scan(&got)
		if want := arg < 0; (err != nil) != want || want && tg.Classify(err) != dbtarget.ErrUserRollback {
			t.Fatalf("call %d with %d: %v (class %v); want an intended rollback only for a negative", i+1, arg, err, tg.Classify(err))
		}
		if arg >= 0 && got != arg {
			t.Errorf("roll(%d) = %d", arg, got)
		}
	}
	n1, at1 := prepared()
	if err := s.QueryRow(ctx, "SELECT roll($1)", -1).Scan(&got); tg.Classify(err) != dbtarget.ErrUserRollback {
		t.Fatalf("another rollback: %v", err)
	}
	if _, err := s.Exec(ctx, "SELECT roll($1)", 5); err != nil {
		t.Fatal(err)
	}
	n2, at2 := prepared()
	if n1 != 1 || n2 != 1 || !at1.Equal(at2) {
		t.Errorf("prepared statements %d (at %v), then %d (at %v): want the one statement, prepared once", n1, at1, n2, at2)
	}
}

// TestNumericAsText: a session's float64 goes to a numeric, and comes
// back, as the same value pgx's binary numeric would give: the shortest
// decimal that reads back as the float64, scale included, in a batch as
// in a single statement.
func TestNumericAsText(t *testing.T) {
	ctx, _, s := newSession(t)
	for _, f := range []float64{0, 0.1, 1.5, 99999.99, 123.45, -3.333333, 1e-7, 5e15, 1.0 / 3} {
		var back float64
		var text string
		if err := s.QueryRow(ctx, "SELECT $1::numeric, $1::numeric::text", f).Scan(&back, &text); err != nil {
			t.Fatal(err)
		}
		if want := strconv.FormatFloat(f, 'f', -1, 64); back != f || text != want {
			t.Errorf("%v as numeric: back %v, text %q; want %v, %q", f, back, text, f, want)
		}
		var cents float64
		b := []dbtarget.Query{{SQL: "SELECT round($1::numeric, 2)", Args: []any{f}, Dest: []any{&cents}}}
		if err := dbtarget.RunBatch(ctx, s, b); err != nil {
			t.Fatal(err)
		}
		if want := math.Round(f*100) / 100; math.Abs(cents-want) > 1e-9*math.Max(1, math.Abs(f)) {
			t.Errorf("%v rounded to cents in a batch: %v, want %v", f, cents, want)
		}
	}
}

// TestFlushCountsExactly: after a flush the database's transaction count
// holds exactly what the session did, the round trips log_statement never
// shows included (a connection's start-up, each prepare); the flushes and
// the target's own reads of the counter add nothing to it, and Flushes
// counts each flush (one at Open, one per Flush).
func TestFlushCountsExactly(t *testing.T) {
	ctx, tg, s := newSession(t)
	fc := tg.(dbtarget.FlushCounter)
	if got := fc.Flushes(); got != 1 {
		t.Errorf("Flushes after Open = %d, want 1 (its own connection's flush)", got)
	}
	xacts := func() int64 {
		t.Helper()
		flushed := fc.Flushes()
		if err := s.(dbtarget.Flusher).Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if got := fc.Flushes() - flushed; got != 1 {
			t.Errorf("Flushes grew by %d over a Flush, want 1", got)
		}
		n, ok, err := tg.Xacts(ctx)
		if !ok || err != nil {
			t.Fatalf("Xacts: %v %v", ok, err)
		}
		return n
	}
	prepared := 0
	steps := []struct {
		what string
		do   func() error
		want int64
	}{
		{"nothing but reading the counter", func() error { return nil }, 0},
		{"one statement", func() error { _, err := s.Exec(ctx, "SELECT 1"); return err }, 1},
		{"a prepare", func() error {
			prepared++
			return s.(dbtarget.Preparer).Prepare(ctx, "SELECT $1::int + "+strconv.Itoa(prepared))
		}, 1},
		{"the prepared statement, run", func() error { _, err := s.Exec(ctx, "SELECT $1::int + 1", 1); return err }, 1},
		{"another session's start-up and its flush", func() error {
			o, err := tg.Session(ctx)
			if err != nil {
				return err
			}
			defer o.Close()
			return o.(dbtarget.Flusher).Flush(ctx)
		}, 1},
	}
	// Autovacuum's visits to the database count too, a couple of
	// transactions about once a minute: a step that counts more than it
	// should gets two more tries, one that counts less none.
	for _, st := range steps {
		for try := 1; ; try++ {
			before := xacts()
			if err := st.do(); err != nil {
				t.Fatalf("%s: %v", st.what, err)
			}
			got := xacts() - before
			if got == st.want {
				break
			}
			if got < st.want || try == 3 {
				t.Errorf("%s: %d transactions counted, want %d", st.what, got, st.want)
				break
			}
		}
	}
}
