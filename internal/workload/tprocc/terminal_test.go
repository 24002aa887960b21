package tprocc

import (
	"fmt"
	"hash/fnv"
	"testing"
)

// inputsFingerprint hashes the types and inputs that virtual user id draws
// in n transactions.
func inputsFingerprint(t *testing.T, cfg *runConfig, id, n int) uint64 {
	v := testVU(t, cfg, id)
	h := fnv.New64a()
	for range n {
		tx := draw(v)
		fmt.Fprint(h, tx)
		switch tx {
		case txNewOrder:
			fmt.Fprint(h, v.no.w, v.no.d, v.no.c, v.no.rollback, v.no.remote, v.no.lines)
		case txPayment:
			fmt.Fprint(h, v.pay)
		case txOrderStatus:
			fmt.Fprint(h, v.os.w, v.os.d, v.os.byName, v.os.last, v.os.c)
		case txDelivery:
			fmt.Fprint(h, v.dl.w, v.dl.carrier)
		case txStockLevel:
			fmt.Fprint(h, v.sl.w, v.sl.d, v.sl.threshold)
		}
	}
	return h.Sum64()
}

// draw picks a virtual user's next transaction and draws its inputs.
func draw(v *vu) int { return v.Next() }

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
