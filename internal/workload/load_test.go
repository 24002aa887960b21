package workload_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/workload"
)

func TestParallel(t *testing.T) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	errBoom := errors.New("boom")
	type task = workload.Task

	t.Run("every task runs on a working session", func(t *testing.T) {
		var ran atomic.Int64
		tasks := make([]task, 20)
		for i := range tasks {
			tasks[i] = func(ctx context.Context, s dbtarget.Session) error {
				var one int
				if err := s.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
					return err
				}
				ran.Add(int64(one))
				return nil
			}
		}
		if err := workload.Parallel(ctx, tg, 3, tasks); err != nil {
			t.Fatal(err)
		}
		if ran.Load() != 20 {
			t.Errorf("%d tasks ran, want 20", ran.Load())
		}
	})

	t.Run("a failed task cancels the others", func(t *testing.T) {
		// The first task fails; the second waits until it is cancelled, so
		// the call returns only if the failure reached it.
		var started atomic.Int64
		tasks := []task{
			func(context.Context, dbtarget.Session) error { return errBoom },
			func(ctx context.Context, _ dbtarget.Session) error {
				started.Add(1)
				<-ctx.Done()
				return ctx.Err()
			},
		}
		for range 10 {
			tasks = append(tasks, func(context.Context, dbtarget.Session) error { started.Add(1); return nil })
		}
		if err := workload.Parallel(ctx, tg, 2, tasks); !errors.Is(err, errBoom) {
			t.Fatalf("err = %v, want the failed task's", err)
		}
		// A worker may take one more task as the cancellation lands.
		if n := started.Load(); n > 3 {
			t.Errorf("%d tasks started after the failure, want the rest skipped", n)
		}
	})

	t.Run("cancelled between tasks", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		tasks := []task{
			func(context.Context, dbtarget.Session) error { cancel(); return nil },
			func(context.Context, dbtarget.Session) error { return nil },
		}
		if err := workload.Parallel(ctx, tg, 1, tasks); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled: tasks were skipped", err)
		}
	})
}
