package dvdstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// openSmall builds a 2 MB store in a fresh SQLite file and opens its
// order entry with seed, thinking think after each order.
func openSmall(t *testing.T, seed uint64, think time.Duration) (*runner, dbtarget.Target) {
	t.Helper()
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, "sqlite:"+t.TempDir()+"/d.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	w := newDVDStore()
	w.size = "2MB"
	w.run.think = think
	if _, err := w.Build(ctx, tg, workload.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	r := o.(*runner)
	r.cfg.seed = seed
	return r, tg
}

// TestInputsGolden: virtual users, one after the other on a fresh store,
// draw from the run's seed the same steps, customers, browses, carts and
// think times as the code before the split of issue 22 did; the
// fingerprint was recorded from it. Each step's draws feed the next, so
// a draw moved or lost changes all that follows.
func TestInputsGolden(t *testing.T) {
	ctx := context.Background()
	r, _ := openSmall(t, 42, time.Second)
	h := fnv.New64a()
	tally := make(driver.Tally, len(tallyNames))
	for _, id := range []int{0, 1, 7} {
		v, err := r.NewVU(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for range 400 {
			step := v.Next()
			if err := v.Run(ctx, step, tally); err != nil && !errors.Is(err, driver.ErrRollback) {
				t.Fatalf("vu %d, %s: %v", id, stepNames[step], err)
			}
			_, think := v.(driver.Pacer).Pacing(step)
			fmt.Fprint(h, step, think)
			fmt.Fprint(h, state(v.(*vu))...)
		}
		v.Close()
	}
	const want uint64 = 0xb34060d0f2b2a2f9
	if got := h.Sum64(); got != want {
		t.Errorf("inputs fingerprint %#x, want %#x", got, want)
	}
}

// state is what a virtual user keeps between its steps.
func state(v *vu) []any {
	return []any{v.customer, v.browsesLeft, v.cart}
}
