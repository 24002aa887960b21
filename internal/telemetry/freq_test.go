package telemetry

import (
	"testing"

	"github.com/prometheus/procfs"
)

// TestPerfCyclesMHz checks turbostat's arithmetic on counts read by hand:
// a counter that ran half the time it was enabled (multiplexed) counts
// double, busy time comes from /proc/stat, and a failed read gives no
// figure rather than a wrapped one.
func TestPerfCyclesMHz(t *testing.T) {
	h := &Host{
		prev: snapshot{
			cycles: []perfCount{{value: 1e9, enabled: 1e9, running: 1e9}, {value: 5e9, enabled: 4e9, running: 4e9}},
			stat:   procfs.Stat{CPU: map[int64]procfs.CPUStat{0: {User: 10, Idle: 100}, 1: {User: 10}}},
		},
		cur: snapshot{
			cycles: []perfCount{{value: 2.5e9, enabled: 2e9, running: 1.5e9}, {}},
			stat:   procfs.Stat{CPU: map[int64]procfs.CPUStat{0: {User: 10.25, System: 0.25, Idle: 100.5}, 1: {User: 11}}},
		},
	}
	p := &perfCycles{fds: []int{-1, -1}}
	avg, busy := p.mhz(h, 1)
	// 1.5e9 cycles over half of 1 s enabled: 3e9 cycles, 3000 MHz on
	// average, over 0.5 s busy 6000 MHz.
	if !nearAll(avg, []float64{3000, 0}) || !nearAll(busy, []float64{6000, 0}) {
		t.Errorf("avg %v, busy %v; want [3000 0], [6000 0]", avg, busy)
	}
}
