package workload

import (
	"runtime/debug"
	"testing"
)

// TestLessGC: a load raises GOGC to loadGCPercent and restores it after,
// but leaves a higher setting, or the collector off, as it was.
func TestLessGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, set := range []int{50, 100, loadGCPercent, 2000, -1} {
		debug.SetGCPercent(set)
		restore := lessGC()
		during := debug.SetGCPercent(set) // read it, then put it back
		debug.SetGCPercent(during)
		if want := max(set, loadGCPercent); set < 0 && during != set || set >= 0 && during != want {
			t.Errorf("GOGC %d during a load: %d", set, during)
		}
		restore()
		if after := debug.SetGCPercent(set); after != set {
			t.Errorf("GOGC %d after a load: %d", set, after)
		}
	}
}
