package dvdstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// openSmall builds a 2 MB store on url and opens its order entry with
// seed, thinking think after each order.
func openSmall(t *testing.T, url string, seed uint64, think time.Duration) (*runner, dbtarget.Target) {
	t.Helper()
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, url)
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
	r.Reseed(seed)
	return r, tg
}

// TestInputsGolden: virtual users, one after the other on a fresh store,
// draw from the run's seed the same steps, customers, browses, carts and
// think times as the code before the split of issue 22 did; the
// fingerprint was recorded from it. Each step's draws feed the next, so
// a draw moved or lost changes all that follows.
func TestInputsGolden(t *testing.T) {
	ctx := context.Background()
	r, _ := openSmall(t, "sqlite:"+t.TempDir()+"/d.db", 42, time.Second)
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
			fmt.Fprint(h, state(v.(*workload.VU[*terminal, *session]))...)
		}
		v.Close()
	}
	const want uint64 = 0xb34060d0f2b2a2f9
	if got := h.Sum64(); got != want {
		t.Errorf("inputs fingerprint %#x, want %#x", got, want)
	}
}

// state is what a virtual user keeps between its steps.
func state(v *workload.VU[*terminal, *session]) []any {
	return []any{v.Terminal.customer, v.Terminal.browsesLeft, v.Session.cart}
}

// TestTerminalIsSmall: a terminal takes about a hundred bytes and nothing
// beside, so that ten thousand of them fit in a few MB.
func TestTerminalIsSmall(t *testing.T) {
	size := unsafe.Sizeof(newTerminal(&runConfig{}, 0))
	t.Logf("a terminal takes %d bytes", size)
	if size > 200 {
		t.Errorf("a terminal takes %d bytes, want 200 at most", size)
	}
}

// TestRetryRepeatsInputs: a step's inputs are drawn on its first attempt
// only, so a retry, on the same session, runs the same login, registration,
// browse or cart, and draws nothing more from the terminal's stream.
func TestRetryRepeatsInputs(t *testing.T) {
	cfg := &runConfig{runOptions: runOptions{pctNew: 50, searches: 3, batch: 5, lineItems: 5},
		scale: small, seed: 9, hot: []int64{1, 2, 3, 3, 3}}
	tm := newTerminal(cfg, 3)
	s := &session{cfg: cfg}
	seen := map[int]bool{}
	for range 200 {
		step := tm.Next()
		s.inputs(&tm, step)
		first, stream := *s, tm.r
		first.cart = slices.Clone(s.cart)
		s.inputs(&tm, step) // the retry
		if s.user != first.user || s.details != first.details || s.by != first.by || s.batch != first.batch ||
			s.category != first.category || s.search != first.search || !slices.Equal(s.cart, first.cart) ||
			tm.r.Uint64() != stream.Uint64() {
			t.Fatalf("%s: a retry drew new inputs", stepNames[step])
		}
		seen[step] = true
		// What the step's success does to the order.
		switch step {
		case stepLogin, stepNewCustomer:
			tm.started(int64(s.user))
		case stepBrowse:
			tm.browsesLeft--
		case stepPurchase:
			tm.customer = 0
		}
	}
	if len(seen) != len(stepNames) {
		t.Errorf("steps drawn %v, want all %d", seen, len(stepNames))
	}
}
