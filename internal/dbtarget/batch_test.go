//go:build unix

package dbtarget_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	"github.com/dbrig/dbrig/internal/dbtarget/postgres"
	"github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestBatch: a batch's statements run in order in one transaction, each
// read as its kind asks (one row, an optional row, every row, none); a
// required row that is missing is ErrNoRow, an error of the transaction
// (not a lost connection); an error stops the batch, and
// nothing after it runs. PostgreSQL sends the batch as one pipeline,
// MariaDB and SQLite run it statement by statement: all must agree.
func TestBatch(t *testing.T) {
	open := map[string]func(ctx context.Context, t *testing.T) (dbtarget.Target, error){
		"postgres": func(ctx context.Context, t *testing.T) (dbtarget.Target, error) {
			return postgres.Open(ctx, pgtest.NewDB(t))
		},
		"mariadb": func(ctx context.Context, t *testing.T) (dbtarget.Target, error) {
			return mariadb.Open(ctx, mariatest.NewDB(t))
		},
		"sqlite": func(ctx context.Context, t *testing.T) (dbtarget.Target, error) {
			return sqlite.OpenURL(ctx, sqlite.Prefix+filepath.Join(t.TempDir(), "b.db"), true)
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tg, err := open(ctx, t)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			s, err := tg.Session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Exec(ctx, "CREATE TABLE b (k int PRIMARY KEY, v varchar(10))"); err != nil {
				t.Fatal(err)
			}
			var v, none string
			var keys []int
			qs := []dbtarget.Query{
				{SQL: "BEGIN"},
				{SQL: "INSERT INTO b VALUES ($1, $2)", Args: []any{1, "a"}},
				{SQL: "INSERT INTO b VALUES ($1, $2)", Args: []any{2, "b"}},
				{SQL: "SELECT v FROM b WHERE k = $1", Args: []any{2}, Dest: []any{&v}},
				{SQL: "SELECT v FROM b WHERE k = $1", Args: []any{9}, Dest: []any{&none}, Optional: true},
				{SQL: "SELECT k FROM b WHERE k > $1 ORDER BY k", Args: []any{0}, Each: func(r dbtarget.Row) error {
					var k int
					err := r.Scan(&k)
					keys = append(keys, k)
					return err
				}},
				{SQL: "COMMIT"},
			}
			if err := dbtarget.RunBatch(ctx, s, qs); err != nil {
				t.Fatal(err)
			}
			if v != "b" || !qs[3].Found || qs[4].Found || !slices.Equal(keys, []int{1, 2}) {
				t.Errorf("read %q (found %v), optional found %v, keys %v; want b, true, false, [1 2]", v, qs[3].Found, qs[4].Found, keys)
			}

			count := func() (n int) {
				t.Helper()
				if err := s.QueryRow(ctx, "SELECT count(*) FROM b").Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			missing := []dbtarget.Query{{SQL: "SELECT v FROM b WHERE k = $1", Args: []any{9}, Dest: []any{&none}}}
			if err := dbtarget.RunBatch(ctx, s, missing); !errors.Is(err, dbtarget.ErrNoRow) || tg.Classify(err) != dbtarget.ErrOther {
				t.Errorf("a required row missing: %v (class %v), want ErrNoRow, counted as the transaction's error", err, tg.Classify(err))
			}
			failing := []dbtarget.Query{
				{SQL: "BEGIN"},
				{SQL: "INSERT INTO b VALUES ($1, $2)", Args: []any{3, "c"}},
				{SQL: "INSERT INTO b VALUES ($1, $2)", Args: []any{1, "dup"}},
				{SQL: "INSERT INTO b VALUES ($1, $2)", Args: []any{4, "d"}},
				{SQL: "COMMIT"},
			}
			if err := dbtarget.RunBatch(ctx, s, failing); err == nil {
				t.Fatal("a duplicate key in a batch: no error")
			}
			if _, err := s.Exec(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
			if n := count(); n != 2 {
				t.Errorf("%d rows after the failed batch and a rollback, want the 2 committed before", n)
			}
		})
	}
}
