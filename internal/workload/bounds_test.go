package workload

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A count the memory cannot hold is one line that says how many can; the
// arithmetic overflows for no count.
func TestCheckMemory(t *testing.T) {
	const avail = 22 << 30
	for _, c := range []struct {
		n    int
		each int64
		want string // "" fits
	}{
		{1000, 1 << 20, ""},
		{22 << 10, 1 << 20, ""},
		{22<<10 + 1, 1 << 20, "--x 22529: 22,529 things would take about 22.0 GiB of memory (1.0 MiB each), and this machine has 22.0 GiB available: at most 22,528"},
		{99999999999, 1 << 20, "99,999,999,999 things would take about 95367.4 TiB"},
		{math.MaxInt, math.MaxInt64, "at most 0"},
		{0, math.MaxInt64, ""},
	} {
		err := checkMemory("--x "+strconv.Itoa(c.n), c.n, c.each, "things", avail)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%d of %d bytes: %v, want it to fit", c.n, c.each, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%d of %d bytes: %v, want %q", c.n, c.each, err, c.want)
		}
	}
}

// An estimate of a huge flag is the longest Duration, not one wrapped
// round to a negative.
func TestEstimate(t *testing.T) {
	if d := Estimate(1.5); d != 1500*time.Millisecond {
		t.Errorf("Estimate(1.5) = %v", d)
	}
	if d := Estimate(99999999999 * 15); d != math.MaxInt64 {
		t.Errorf("Estimate of 99,999,999,999 warehouses at 15 s = %v, want the longest Duration", d)
	}
}
