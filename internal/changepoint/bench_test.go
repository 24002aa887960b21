package changepoint

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// benchSeries is noise around 1000 (sd 2%) with the level moved at a
// quarter, half and three quarters of the way: three changes, so Detect
// makes four permutation tests, three of them significant.
func benchSeries(n int) []float64 {
	xs := noise(rand.New(rand.NewPCG(1, uint64(n))), n, 0, 20)
	for i := range xs {
		switch {
		case i >= 3*n/4:
			xs[i] += 1050
		case i >= n/2:
			xs[i] += 1150
		case i >= n/4:
			xs[i] += 1100
		default:
			xs[i] += 1000
		}
	}
	return xs
}

// BenchmarkDetect reports CPU time per op (cpu-ns/op) beside ns/op, which
// on a shared machine counts time spent waiting for a CPU.
func BenchmarkDetect(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		xs := benchSeries(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var found int
			start := cpuTime(b)
			for b.Loop() {
				ps, err := Detect(xs, Options{})
				if err != nil {
					b.Fatal(err)
				}
				found = len(ps)
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(found), "changes")
		})
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
