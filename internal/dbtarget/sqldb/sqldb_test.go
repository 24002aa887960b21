package sqldb_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/sqldb"
	// SQLite, the one database/sql driver always built in, takes both
	// ?N and bare ?, so it can stand in for a ?-only driver too.
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
)

func openSQLite(t *testing.T, p sqldb.Placeholders) (*sqldb.DB, dbtarget.Session) {
	t.Helper()
	i := slices.IndexFunc(sql.Drivers(), func(d string) bool { return strings.HasPrefix(d, "sqlite") })
	if i < 0 {
		t.Fatalf("no SQLite driver among %v", sql.Drivers())
	}
	db, err := sql.Open(sql.Drivers()[i], filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := &sqldb.DB{SQL: db, Placeholders: p, BeginWrite: "BEGIN", Class: func(error) dbtarget.ErrClass { return dbtarget.ErrRetry }}
	s, err := d.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return d, s
}

// TestPlaceholderStyles runs the same workload statements, with repeated
// and out-of-order $N, through both styles against a real database.
func TestPlaceholderStyles(t *testing.T) {
	ctx := context.Background()
	for _, p := range []sqldb.Placeholders{sqldb.Numbered, sqldb.Positional} {
		_, s := openSQLite(t, p)
		var got string
		if err := s.QueryRow(ctx, "SELECT $2 || '$1' || $1 || $2", "a", "b").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != "b$1ab" {
			t.Errorf("style %d: got %q, want %q", p, got, "b$1ab")
		}
		if _, err := s.Exec(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER)"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx, "t", []string{"id", "x"}, &pairs{n: 200}); err != nil {
			t.Fatal(err)
		}
		n, err := s.Exec(ctx, "UPDATE t SET x = x + $2 WHERE id >= $1 AND id < $1 + $2", 10, 5)
		if err != nil || n != 5 {
			t.Errorf("style %d: update took %d rows, %v; want 5", p, n, err)
		}
		rs, err := s.Query(ctx, "SELECT id, x FROM t WHERE x <> id * $1 ORDER BY id", 2)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		for rs.Next() {
			var id, x int
			if err := rs.Scan(&id, &x); err != nil {
				t.Fatal(err)
			}
			if x != 2*id+5 {
				t.Errorf("style %d: row %d has x = %d, want %d", p, id, x, 2*id+5)
			}
			ids = append(ids, id)
		}
		rs.Close()
		if rs.Err() != nil || !slices.Equal(ids, []int{10, 11, 12, 13, 14}) {
			t.Errorf("style %d: updated rows %v, %v", p, ids, rs.Err())
		}
	}
}

// TestClassify: a closed session is lost whatever the driver says; other
// errors are the driver's Class to judge (here, everything is ErrRetry).
func TestClassify(t *testing.T) {
	ctx := context.Background()
	d, s := openSQLite(t, sqldb.Numbered)
	_, err := s.Exec(ctx, "SELECT nosuchcolumn")
	if err == nil || d.Classify(err) != dbtarget.ErrRetry {
		t.Errorf("bad statement: %v classified %v, want the driver's ErrRetry", err, d.Classify(err))
	}
	s.Close()
	_, err = s.Exec(ctx, "SELECT 1")
	if err == nil || d.Classify(err) != dbtarget.ErrConnLost {
		t.Errorf("closed session: %v classified %v, want ErrConnLost", err, d.Classify(err))
	}
}

func TestTooFewArguments(t *testing.T) {
	_, s := openSQLite(t, sqldb.Positional)
	err := s.QueryRow(context.Background(), "SELECT $1 + $3", 1, 2).Scan(new(int))
	if err == nil || !strings.Contains(err.Error(), "$3") {
		t.Errorf("err = %v, want one naming $3", err)
	}
}

// TestArgumentsBeyondTheStatement: a statement reads the arguments it
// names and leaves the rest, so that two statements can share one list.
func TestArgumentsBeyondTheStatement(t *testing.T) {
	ctx := context.Background()
	for _, p := range []sqldb.Placeholders{sqldb.Numbered, sqldb.Positional} {
		_, s := openSQLite(t, p)
		for _, q := range []string{"SELECT $1 + $2", "SELECT $2 + $1"} {
			var got int
			if err := s.QueryRow(ctx, q, 1, 2, "unread").Scan(&got); err != nil || got != 3 {
				t.Errorf("style %d, %s: %d, %v; want 3", p, q, got, err)
			}
		}
	}
}

// TestIntListsAsJSON: a list of integers reaches the database as a JSON
// array it can read, in either placeholder style, and the caller's
// arguments are left as they were.
func TestIntListsAsJSON(t *testing.T) {
	ctx := context.Background()
	for _, p := range []sqldb.Placeholders{sqldb.Numbered, sqldb.Positional} {
		_, s := openSQLite(t, p)
		args := []any{7, []int32{3, -1, 40000}, []int32{}}
		var n, third, empty, x int
		err := s.QueryRow(ctx, "SELECT json_array_length($2), json_extract($2, '$[2]'), json_array_length($3), $1",
			args...).Scan(&n, &third, &empty, &x)
		if err != nil {
			t.Fatalf("style %d: %v", p, err)
		}
		if n != 3 || third != 40000 || empty != 0 || x != 7 {
			t.Errorf("style %d: read %d, %d, %d, %d; want 3, 40000, 0, 7", p, n, third, empty, x)
		}
		if _, ok := args[1].([]int32); !ok {
			t.Errorf("style %d: the caller's argument became %T", p, args[1])
		}
	}
}

// TestLoadFailureRollsBack: a load that fails in its first batch, before
// any row is in, still ends its transaction, so the session can go on.
func TestLoadFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	_, s := openSQLite(t, sqldb.Numbered)
	if _, err := s.Exec(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, "INSERT INTO t VALUES (3, 0)"); err != nil {
		t.Fatal(err)
	}
	n, err := s.Load(ctx, "t", []string{"id", "x"}, &pairs{n: 10})
	if err == nil || !strings.Contains(err.Error(), "load t") {
		t.Fatalf("loading a duplicate key: %d rows, %v; want an error", n, err)
	}
	if _, err := s.Exec(ctx, "BEGIN"); err != nil {
		t.Fatalf("after the failed load: %v", err)
	}
	var count int
	if err := s.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&count); err != nil || count != 1 {
		t.Errorf("%d rows, %v after the failed load; want the 1 from before", count, err)
	}
}

// pairs yields n rows of (i, 2i).
type pairs struct{ n, i int }

func (r *pairs) Next() bool             { r.i++; return r.i <= r.n }
func (r *pairs) Values() ([]any, error) { return []any{r.i, 2 * r.i}, nil }
func (r *pairs) Err() error             { return nil }
