//go:build unix

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

// withMode is url with pgx's default_query_exec_mode set to mode.
func withMode(url, mode string) string {
	if mode == "" {
		return url
	}
	return url + "&default_query_exec_mode=" + mode
}

// TestExecModes: with each of pgx's modes in the URL but the default, a
// session prepares no statement of its own, and what dbrig's workloads
// send still works: a stored function with int, int[], numeric and
// timestamp arguments (the Go values int, []int32, float64 and
// time.Time), a statement without arguments, a query of many rows, and a
// pipeline inside a transaction. The default prepares them by name.
func TestExecModes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, _ := modeDB(ctx, t)
	for _, mode := range []string{"", "cache_statement", "exec", "cache_describe", "describe_exec", "simple_protocol"} {
		t.Run("mode="+mode, func(t *testing.T) {
			named := mode == "" || mode == "cache_statement"
			tg, err := Open(ctx, withMode(url, mode))
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			s, err := tg.Session(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.(dbtarget.Preparer).Prepare(ctx, "SELECT v FROM kv WHERE k = $1"); err != nil {
				t.Fatal(err)
			}
			runModeStatements(ctx, t, s)
			var prepared int
			if err := s.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements").Scan(&prepared); err != nil {
				t.Fatal(err)
			}
			if named && prepared < 3 || !named && prepared != 0 {
				t.Errorf("%d statements prepared on the session; want %v", prepared, map[bool]string{true: "at least 3", false: "none"}[named])
			}
		})
	}
}

// modeDB is a database of the test's own with the table kv and the
// function call that runModeStatements uses, and a target on it.
func modeDB(ctx context.Context, t *testing.T) (url string, direct dbtarget.Target) {
	t.Helper()
	url = pgtest.NewDB(t)
	direct, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	s, err := direct.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, sql := range []string{
		"CREATE TABLE kv (k int PRIMARY KEY, v numeric)",
		`CREATE FUNCTION call(w int, items int[], amount numeric, at timestamp) RETURNS TABLE (n int, total numeric)
		LANGUAGE sql AS $$ SELECT w + cardinality(items), amount * 2 + extract(year FROM at)::numeric $$`,
	} {
		if _, err := s.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	return url, direct
}

// runModeStatements runs on s what TestExecModes checks, on the table kv
// and the function call it made.
func runModeStatements(ctx context.Context, t *testing.T, s dbtarget.Session) {
	t.Helper()
	var n int
	var total float64
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	if err := s.QueryRow(ctx, "SELECT * FROM call($1, $2, $3, $4)", 1, []int32{7, 8, 9}, 2.5, at).Scan(&n, &total); err != nil {
		t.Fatal(err)
	}
	if n != 4 || total != 2031 {
		t.Errorf("call returned %d, %v; want 4, 2031", n, total)
	}
	if _, err := s.Exec(ctx, "TRUNCATE kv"); err != nil {
		t.Fatal(err)
	}
	var sum float64
	qs := []dbtarget.Query{{SQL: "BEGIN"}}
	for k := 1; k <= 3; k++ {
		qs = append(qs, dbtarget.Query{SQL: "INSERT INTO kv VALUES ($1, $2)", Args: []any{k, float64(k) / 4}})
	}
	qs = append(qs, dbtarget.Query{SQL: "SELECT sum(v) FROM kv WHERE k <= $1", Args: []any{3}, Dest: []any{&sum}}, dbtarget.Query{SQL: "COMMIT"})
	if err := s.(dbtarget.Batcher).Batch(ctx, qs); err != nil {
		t.Fatal(err)
	}
	if sum != 1.5 {
		t.Errorf("sum inside the pipeline's transaction %v, want 1.5", sum)
	}
	rows, err := s.Query(ctx, "SELECT k FROM kv WHERE k >= $1 ORDER BY k", 2)
	if err != nil {
		t.Fatal(err)
	}
	var ks []int
	for rows.Next() {
		var k int
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ks) != 2 || ks[0] != 2 {
		t.Errorf("rows %v, %v; want [2 3]", ks, err)
	}
}

// TestUnknownExecMode: a mode pgx does not know is one line that names
// the ones it does, exit 2, and the password is not in it.
func TestUnknownExecMode(t *testing.T) {
	_, err := Open(context.Background(), "postgres://u:s3cr3t@127.0.0.1:1/db?sslmode=disable&default_query_exec_mode=nope")
	var ue *exitcode.UserError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v; want a UserError", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "\n") || !strings.Contains(msg, "nope") ||
		!strings.Contains(msg, "must be one of cache_statement (the default), cache_describe, describe_exec, exec, simple_protocol") {
		t.Errorf("got %q; want one line naming the value and the modes, without the password", msg)
	}
}
