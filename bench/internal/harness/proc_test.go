//go:build linux

package harness

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestWatched: a child that holds 64 MB resident for a moment has a peak
// RSS of at least that, and the 1 Hz-style sampler beside it reads its
// resident set and CPU time while it runs, and stops when it exits.
func TestWatched(t *testing.T) {
	ctx := context.Background()
	// Python is not everywhere; awk is, and a 64 MB string is resident.
	cmd := exec.Command("awk", `BEGIN { s = sprintf("%67108864s", ""); t = systime(); while (systime() - t < 2) n++; print length(s) > "/dev/null" }`)
	var samples []ProcSample
	u, err := Watched(ctx, cmd, func(ctx context.Context, pid int) { samples = SampleProc(ctx, pid, 100*time.Millisecond) })
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSS < 64<<20 {
		t.Errorf("peak RSS %d bytes, want at least 64 MiB", u.PeakRSS)
	}
	if u.CPU <= 0 || u.Wall < time.Second {
		t.Errorf("CPU %v, wall %v: want some CPU over at least a second", u.CPU, u.Wall)
	}
	if len(samples) < 5 {
		t.Fatalf("%d samples over %v, want one every 100 ms", len(samples), u.Wall)
	}
	last := samples[len(samples)-1]
	if last.RSS < 64<<20 || last.CPU <= 0 || last.CPU > u.CPU {
		t.Errorf("last sample: RSS %d, CPU %v (the process's total %v)", last.RSS, last.CPU, u.CPU)
	}
}
