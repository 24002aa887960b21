//go:build unix

package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestBatchReadsAsPgx: a batch of statements the session prepared reads
// each result as pgx would, the text types into *string and *any among
// them; a statement whose rows are optional finds none; an error in the
// middle fails the batch with the server's error, the rest skipped, and
// the session goes on once the transaction the batch opened is rolled
// back.
func TestBatchReadsAsPgx(t *testing.T) {
	ctx, _, s := newSession(t)
	if _, err := s.Exec(ctx, "CREATE TABLE b (k int PRIMARY KEY, v varchar(10), c char(4))"); err != nil {
		t.Fatal(err)
	}
	var k, sum int
	var v, c string
	var anyV, anyC any
	each := func(r dbtarget.Row) error {
		var n int
		err := r.Scan(&n)
		sum += n
		return err
	}
	b := []dbtarget.Query{
		{SQL: "BEGIN"},
		{SQL: "INSERT INTO b VALUES ($1, $2, $3), ($1 + 1, $2, $3)", Args: []any{1, "ab", "x"}},
		{SQL: "SELECT k, v, c, v, c FROM b WHERE k = $1", Args: []any{1}, Dest: []any{&k, &v, &c, &anyV, &anyC}},
		{SQL: "SELECT k FROM b WHERE k > $1", Args: []any{0}, Each: each},
		{SQL: "SELECT k FROM b WHERE k = $1", Args: []any{9}, Dest: []any{&k}, Optional: true},
		{SQL: "COMMIT"},
	}
	if err := s.(dbtarget.Batcher).Batch(ctx, b); err != nil {
		t.Fatal(err)
	}
	if k != 1 || v != "ab" || c != "x   " || anyV != "ab" || anyC != "x   " || sum != 3 || !b[2].Found || b[4].Found {
		t.Errorf("read %v %q %q %#v %#v, sum %v, found %v %v", k, v, c, anyV, anyC, sum, b[2].Found, b[4].Found)
	}
	// What pgx reads the same columns as.
	var pgxV, pgxC any
	if err := s.(*session).c.QueryRow(ctx, "SELECT v, c FROM b WHERE k = 1").Scan(&pgxV, &pgxC); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%T %#v %T %#v", anyV, anyV, anyC, anyC) != fmt.Sprintf("%T %#v %T %#v", pgxV, pgxV, pgxC, pgxC) {
		t.Errorf("into any: %#v %#v; pgx's %#v %#v", anyV, anyC, pgxV, pgxC)
	}

	// A missing row where one is needed, then a failing statement.
	b[4].Optional = false
	if err := s.(dbtarget.Batcher).Batch(ctx, b[2:5]); !errors.Is(err, dbtarget.ErrNoRow) {
		t.Errorf("no row: %v; want ErrNoRow", err)
	}
	fail := []dbtarget.Query{
		{SQL: "BEGIN"},
		{SQL: "INSERT INTO b VALUES ($1, $2, $3)", Args: []any{5, "cd", "y"}},
		{SQL: "INSERT INTO b VALUES ($1, $2, $3)", Args: []any{1, "dup", "z"}},
		{SQL: "COMMIT"},
	}
	err := s.(dbtarget.Batcher).Batch(ctx, fail)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Errorf("duplicate key: %v", err)
	}
	// The server skipped the rest up to the Sync: the transaction is still
	// open, and failed.
	if _, err := s.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.QueryRow(ctx, "SELECT count(*)::int FROM b WHERE k >= $1", 0).Scan(&n); err != nil || n != 2 {
		t.Errorf("after the failed batch: %v rows, %v; want 2", n, err)
	}
}
