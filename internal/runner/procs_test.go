package runner

import (
	"runtime"
	"testing"
)

// TestHoldProcs: runs that overlap get the most any of them asked for,
// and the process what it had before them once the last ends, in
// whatever order they end.
func TestHoldProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	want := func(step string, n int) {
		t.Helper()
		if got := runtime.GOMAXPROCS(0); got != n {
			t.Errorf("%s: GOMAXPROCS %d, want %d", step, got, n)
		}
	}
	a := holdProcs(1)
	want("the first run, alone", 1)
	b := holdProcs(1)
	a()
	want("the first run ended, the second in progress", 1)
	b()
	want("both ended", before)

	a = holdProcs(1)
	b = holdProcs(before + 2)
	want("a second run asking for more", before+2)
	b()
	want("the second ended", 1)
	b = holdProcs(before + 1)
	a()
	want("the first ended", before+1)
	b()
	want("all ended", before)
}
