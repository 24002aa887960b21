package workload_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestLoadThen: a table's follow-up runs once its last job is done, ahead
// of the jobs still waiting, on a session that sees the loaded rows; a
// table with no jobs has its follow-up first; a failed follow-up stops
// the load with its error.
func TestLoadThen(t *testing.T) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "l.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"CREATE TABLE a (n int)", "CREATE TABLE b (n int)"} {
		if _, err := s.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	var mu sync.Mutex
	var order []string
	note := func(what string) {
		mu.Lock()
		order = append(order, what)
		mu.Unlock()
	}
	job := func(table, name string, rows int) workload.LoadJob {
		return workload.LoadJob{Table: table, Columns: []string{"n"}, Rows: int64(rows), Source: func() dbtarget.RowSource {
			note(name)
			i := 0
			return workload.RowFunc(1, func(v []any) bool { i++; v[0] = i; return i <= rows })
		}}
	}
	count := func(table string, want int, fail error) workload.Task {
		return func(ctx context.Context, s dbtarget.Session) error {
			var n int
			if err := s.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				return err
			}
			note(table + " then")
			if n != want {
				t.Errorf("%s's follow-up saw %d rows, want %d", table, n, want)
			}
			return fail
		}
	}
	jobs := []workload.LoadJob{job("a", "a1", 2), job("a", "a2", 3), job("b", "b1", 5)}
	then := map[string][]workload.Task{
		"a": {count("a", 5, nil)}, "b": {count("b", 5, nil)},
		"c": {func(context.Context, dbtarget.Session) error { note("c then"); return nil }},
	}
	rows, err := workload.LoadThen(ctx, tg, 2, jobs, then, "loading", func(int64, int64, string) {})
	if err != nil || rows != 10 {
		t.Fatalf("loaded %d rows, err %v; want 10", rows, err)
	}
	if want := []string{"c then", "a1", "a2", "a then", "b1", "b then"}; !slices.Equal(order, want) {
		t.Errorf("order %q, want %q", order, want)
	}

	errBoom := errors.New("boom")
	order = nil
	then = map[string][]workload.Task{"a": {count("a", 10, errBoom)}}
	if _, err := workload.LoadThen(ctx, tg, 2, jobs[:2], then, "loading", func(int64, int64, string) {}); !errors.Is(err, errBoom) {
		t.Errorf("err %v, want the follow-up's", err)
	}
}
