package tprocc

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"
	"unsafe"
)

// inputsFingerprint hashes the types and inputs that virtual user id draws
// in n transactions.
func inputsFingerprint(t *testing.T, cfg *runConfig, id, n int) uint64 {
	v := testVU(t, cfg, id)
	h := fnv.New64a()
	for range n {
		tx := draw(v)
		fmt.Fprint(h, tx)
		fmt.Fprint(h, inputsOf(v.session, tx)...)
	}
	return h.Sum64()
}

// draw picks a virtual user's next transaction and draws its inputs, as
// its first attempt does.
func draw(v *vu) int {
	tx := v.Next()
	v.inputs(&v.terminal, tx)
	return tx
}

// TestInputsGolden: a virtual user draws, from the run's seed, the same
// transactions and inputs as the code before the split of issue 22 did;
// the fingerprints were recorded from it.
func TestInputsGolden(t *testing.T) {
	for _, c := range []struct {
		warehouses, id int
		want           uint64
	}{
		{1, 0, 0x642b867bd3b6e089},
		{1, 1, 0xba50e68c75faac6a},
		{1, 7, 0x58389496c325932d},
		{1, 123, 0xcc3b2e90f2caf3c},
		{5, 0, 0x228fee763a36b606},
		{5, 1, 0xae73edc495bab20},
		{5, 7, 0x5427a51d602adb41},
		{5, 123, 0x18bf7fa02a97a81b},
	} {
		if got := inputsFingerprint(t, testConfig(t, c.warehouses), c.id, 3000); got != c.want {
			t.Errorf("%d warehouses, vu %d: inputs fingerprint %#x, want %#x", c.warehouses, c.id, got, c.want)
		}
	}
}

// inputsOf is the inputs of transaction tx that a fingerprint takes.
func inputsOf(s *session, tx int) []any {
	switch tx {
	case txNewOrder:
		return []any{s.no.w, s.no.d, s.no.c, s.no.rollback, s.no.remote, s.no.lines}
	case txPayment:
		return []any{s.pay}
	case txOrderStatus:
		return []any{s.os.w, s.os.d, s.os.byName, s.os.last, s.os.c}
	case txDelivery:
		return []any{s.dl.w, s.dl.carrier}
	}
	return []any{s.sl.w, s.sl.d, s.sl.threshold}
}

// TestPooledSessionDealsAudited: terminals sharing a session of a pool
// draw the audited events from the session's decks, so every hundred
// New-Orders the session runs, whichever terminals keyed them, hold
// exactly one rollback.
func TestPooledSessionDealsAudited(t *testing.T) {
	r := &runner{t: noSession{}, cfg: *testConfig(t, 4)}
	s, err := r.NewSession(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	terms := []*terminal{r.NewTerminal(0).(*terminal), r.NewTerminal(1).(*terminal), r.NewTerminal(2).(*terminal)}
	rollbacks, orders := 0, 0
	for i := 0; orders < 500; i++ {
		tm := terms[i%len(terms)]
		if tm.Next() != txNewOrder {
			continue
		}
		s.(pooled).inputs(tm, txNewOrder)
		orders++
		if s.(pooled).no.rollback {
			rollbacks++
		}
		if orders%100 == 0 && rollbacks != orders/100 {
			t.Fatalf("%d New-Orders on one session, %d rolled back; want exactly %d", orders, rollbacks, orders/100)
		}
	}

}

// TestTerminalIsSmall: a terminal, its mix deck's cards included, takes a
// few hundred bytes, so that ten thousand of them fit in a few MB.
func TestTerminalIsSmall(t *testing.T) {
	tm := newTerminal(testConfig(t, 1), 0)
	size := unsafe.Sizeof(tm)
	for _, n := range mixCards {
		size += uintptr(n) // a byte a card
	}
	t.Logf("a terminal takes %d bytes", size)
	if size > 400 {
		t.Errorf("a terminal takes %d bytes, want a few hundred at most", size)
	}
}
