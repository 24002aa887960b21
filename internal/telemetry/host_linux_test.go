package telemetry

import (
	"math"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestHostReal reads this machine's own /proc and /sys while a goroutine
// burns half a second of CPU: the client's share must be the CPU time the
// kernel's rusage gives this process over the same interval, whatever
// else the machine runs, and so must the server's when the server is this
// process.
func TestHostReal(t *testing.T) {
	h := NewHost(HostConfig{ServerPID: os.Getpid(), DataPath: t.TempDir(), Perf: true})
	defer h.Close()
	t.Logf("facts %+v; unavailable %v", h.Facts(), h.Unavailable())
	if _, ok := h.Sample(time.Now()); ok {
		t.Fatal("the first sample only primes, yet it returned one")
	}
	before := cpuTime(t)
	burn(t, 0.5)
	s, ok := h.Sample(time.Now())
	used := cpuTime(t) - before
	if !ok {
		t.Fatalf("no sample; unavailable: %v", h.Unavailable())
	}
	t.Logf("sample %+v", s)
	// Shares are of all CPUs over the interval; /proc counts in 10 ms ticks.
	seconds := func(pct float64) float64 { return pct / 100 * float64(h.Facts().OnlineCPUs) * s.DT }
	near := func(got float64) bool { return math.Abs(got-used) <= 0.05+0.1*used }
	if got := seconds(s.Client); !near(got) || used < 0.1 {
		t.Errorf("client %.1f%% = %.2f CPU s; rusage says %.2f s", s.Client, got, used)
	}
	if s.Server == nil || !near(seconds(*s.Server)) {
		t.Errorf("server (this process) %v; rusage says %.2f s", s.Server, used)
	}
	if s.CPU.Busy() < s.Client-5 {
		t.Errorf("host busy %.1f%% below the client's %.1f%%", s.CPU.Busy(), s.Client)
	}
}

// cpuTime is this process's user and system CPU so far, in seconds.
func cpuTime(t *testing.T) float64 {
	t.Helper()
	s, err := processCPU()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func processCPU() (float64, error) {
	var ru syscall.Rusage
	err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), err
}

// burn keeps one goroutine on a CPU until the process has used cpu more
// of it, or for a minute: a second of the clock gave it 0.09 s of CPU on a
// host the other packages' tests kept busy.
func burn(t *testing.T, cpu float64) {
	done := make(chan struct{})
	start := cpuTime(t)
	go func() {
		defer close(done)
		x := 0
		for stop := time.Now().Add(time.Minute); time.Now().Before(stop); x++ {
			if x%1_000_000 == 0 {
				if now, err := processCPU(); err != nil || now-start >= cpu {
					return
				}
			}
		}
		_ = x
	}()
	<-done
}
