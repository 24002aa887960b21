package mariadb_test

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// TestBatch: a batch goes as one query and each statement's result reaches
// its own query, through statements that return no rows, an empty result
// and a value that would end a string and the statement if it were not
// escaped.
func TestBatch(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	s := session(t, tg)
	if _, ok := s.(dbtarget.Batcher); !ok {
		t.Fatalf("a %T sends its batches statement by statement", s)
	}
	exec(t, s, "CREATE TABLE k (id INT PRIMARY KEY, v INT, note VARCHAR(100)) ENGINE=InnoDB")
	exec(t, s, "INSERT INTO k VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')")
	// The driver's interpolation escapes both the quote and the
	// backslash; the rest would drop the table if it ran as SQL.
	nasty := `x\'; DROP TABLE k; -- ?$1 "`
	var v1, v2 int
	var ids []int
	var note string
	b := []dbtarget.Query{
		{SQL: "START TRANSACTION"},
		{SQL: "SELECT v FROM k WHERE id = $1 FOR UPDATE", Args: []any{1}, Dest: []any{&v1}},
		// Out of order and repeated placeholders, as the workloads write them.
		{SQL: "UPDATE k SET v = $2 + $2, note = $3 WHERE id = $1", Args: []any{2, 21, nasty}},
		{SQL: "SELECT v FROM k WHERE id = $1", Args: []any{4}, Dest: []any{&v2}, Optional: true},
		{SQL: "SELECT id FROM k WHERE v > $1 ORDER BY id", Args: []any{15}, Each: func(r dbtarget.Row) error {
			var id int
			err := r.Scan(&id)
			ids = append(ids, id)
			return err
		}},
		{SQL: "SELECT v, note FROM k WHERE id = $1 -- a comment ends the statement", Args: []any{2}, Dest: []any{&v2, &note}},
		{SQL: "COMMIT"},
	}
	if err := dbtarget.RunBatch(ctx, s, b); err != nil {
		t.Fatal(err)
	}
	if v1 != 10 || !b[1].Found {
		t.Errorf("first SELECT: %d (found %v), want 10", v1, b[1].Found)
	}
	if b[3].Found {
		t.Error("the SELECT of a missing row found one")
	}
	if len(ids) != 2 || ids[0] != 2 || ids[1] != 3 {
		t.Errorf("ids over 15: %v, want [2 3]", ids)
	}
	if v2 != 42 || note != nasty {
		t.Errorf("row 2 reads %d %q, want 42 %q", v2, note, nasty)
	}
	var n int
	if err := s.QueryRow(ctx, "SELECT count(*) FROM k").Scan(&n); err != nil || n != 3 {
		t.Errorf("k has %d rows (%v) after the batch, want 3", n, err)
	}
}

// TestBatchErrors: the server stops a batch at its first failing
// statement, whose error classifies as it would alone, with the
// statements before it done and the transaction still open, for the
// caller to roll back; nothing after it runs.
func TestBatchErrors(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	a, b := session(t, tg), session(t, tg)
	exec(t, a, "CREATE TABLE k (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
	exec(t, a, "INSERT INTO k VALUES (1, 0), (2, 0), (3, 0)")
	exec(t, a, "CREATE PROCEDURE rollback_me() BEGIN SIGNAL SQLSTATE 'DR001' SET MESSAGE_TEXT = 'intended'; END")
	exec(t, b, "SET SESSION innodb_lock_wait_timeout = 1")
	exec(t, a, "START TRANSACTION")
	exec(t, a, "UPDATE k SET v = 9 WHERE id = 1")

	read := func(what string) int {
		t.Helper()
		var v int
		if err := b.QueryRow(ctx, "SELECT v FROM k WHERE id = 3").Scan(&v); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	cases := []struct {
		what, bad string
		class     dbtarget.ErrClass
	}{
		{"a lock wait", "SELECT v FROM k WHERE id = 1 FOR UPDATE", dbtarget.ErrRetry},
		{"the intended rollback", "CALL rollback_me()", dbtarget.ErrUserRollback},
		{"a missing column", "SELECT nothing FROM k", dbtarget.ErrOther},
	}
	for _, c := range cases {
		var v int
		start := time.Now()
		err := dbtarget.RunBatch(ctx, b, []dbtarget.Query{
			{SQL: "START TRANSACTION"},
			{SQL: "UPDATE k SET v = v + 1 WHERE id = 2"},
			{SQL: "SELECT v FROM k WHERE id = 2", Dest: []any{&v}},
			{SQL: c.bad, Dest: []any{&v}},
			{SQL: "UPDATE k SET v = v + 1 WHERE id = 3"},
			{SQL: "COMMIT"},
		})
		if got := tg.Classify(err); err == nil || got != c.class {
			t.Errorf("%s: %v (class %d), want class %d", c.what, err, got, c.class)
		}
		var open int
		if err := b.QueryRow(ctx, "SELECT @@in_transaction").Scan(&open); err != nil || open != 1 {
			t.Errorf("%s: in a transaction %d (%v), want the one the batch opened", c.what, open, err)
		}
		if got := read(c.what); got != 0 {
			t.Errorf("%s: row 3 is %d within the transaction: the statement after the error ran", c.what, got)
		}
		exec(t, b, "ROLLBACK")
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s took %v", c.what, d)
		}
	}
	exec(t, a, "ROLLBACK")
	var v2 int
	if err := b.QueryRow(ctx, "SELECT v FROM k WHERE id = 2").Scan(&v2); err != nil || v2 != 0 {
		t.Errorf("row 2 is %d (%v) after three rolled-back batches, want 0", v2, err)
	}
}
