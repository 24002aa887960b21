package blockio

import (
	"fmt"
	"hash/fnv"
	"testing"
	"time"
	"unsafe"
)

// goldenConfigs are the runs TestInputsGolden draws from.
var goldenConfigs = []runConfig{
	{Scale: 100000, WorkUnit: 64, UpdatePct: 20, Seed: 42},
	{Scale: 50000, WorkUnit: 8, UpdatePct: 50, Hotspot: 3, HotKeys: 1024, Seed: 7,
		ThinkMin: 10 * time.Millisecond, ThinkMax: 50 * time.Millisecond},
}

// inputsFingerprint hashes the operations, ranges and think times that
// virtual user id draws in n operations.
func inputsFingerprint(cfg *runConfig, id, n int) uint64 {
	v := newTerminal(cfg, id)
	h := fnv.New64a()
	for range n {
		tx := v.Next()
		_, think := v.Pacing(tx)
		fmt.Fprint(h, tx, v.lo, v.hi, think)
	}
	return h.Sum64()
}

// TestInputsGolden: a virtual user draws, from the run's seed, the same
// operations, ranges and think times as the code before the split of
// issue 22 did; the fingerprints were recorded from it.
func TestInputsGolden(t *testing.T) {
	for _, c := range []struct {
		cfg, id int
		want    uint64
	}{
		{0, 0, 0xf8909e30e17ba780}, {0, 1, 0x61d15a4da94f9208}, {0, 7, 0xee240b71f0f145bd},
		{1, 0, 0x2cb9e082f0e4acd6}, {1, 1, 0x39474321438c020a}, {1, 7, 0x9c1749876c7a5084},
	} {
		if got := inputsFingerprint(&goldenConfigs[c.cfg], c.id, 3000); got != c.want {
			t.Errorf("config %d, vu %d: inputs fingerprint %#x, want %#x", c.cfg, c.id, got, c.want)
		}
	}
}

// TestTerminalIsSmall: a terminal takes a couple of hundred bytes and
// nothing beside, so that ten thousand of them fit in a few MB.
func TestTerminalIsSmall(t *testing.T) {
	size := unsafe.Sizeof(newTerminal(&goldenConfigs[0], 0))
	t.Logf("a terminal takes %d bytes", size)
	if size > 200 {
		t.Errorf("a terminal takes %d bytes, want 200 at most", size)
	}
}
