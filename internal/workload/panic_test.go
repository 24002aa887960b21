package workload_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestLoaderPanicSQLite: a panic in a loader's goroutine, in a task or
// in a row generator, as a bug in a workload's code would, does not crash
// the process: the call returns it as an *exitcode.Panic with its stack,
// for the command to report as it does a panic of its own.
func TestLoaderPanicSQLite(t *testing.T) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	wantPanic := func(what string, err error) {
		t.Helper()
		var p *exitcode.Panic
		if !errors.As(err, &p) || !strings.Contains(fmt.Sprint(p.Value), "generator bug") || !strings.Contains(string(p.Stack), "panic_test.go") {
			t.Errorf("%s: %v, want the panic, with its stack", what, err)
		}
	}
	boom := func() { panic("generator bug") }

	task := func(context.Context, dbtarget.Session) error { boom(); return nil }
	wantPanic("Parallel", workload.Parallel(ctx, tg, 2, []workload.Task{workload.Exec("SELECT 1"), task, workload.Exec("SELECT 1")}))

	if err := workload.Parallel(ctx, tg, 1, []workload.Task{workload.Exec("CREATE TABLE t (i int)")}); err != nil {
		t.Fatal(err)
	}
	n := 0
	rows := func() dbtarget.RowSource {
		return workload.RowFunc(1, func(v []any) bool {
			if n++; n == 3 {
				boom()
			}
			v[0] = n
			return n < 10
		})
	}
	_, err = workload.Load(ctx, tg, 1, []workload.LoadJob{{Table: "t", Columns: []string{"i"}, Rows: 10, Source: rows}}, "loading", func(int64, int64, string) {})
	wantPanic("Load", err)
}
