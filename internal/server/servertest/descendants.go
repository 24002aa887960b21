//go:build linux

package servertest

import (
	"testing"

	"github.com/prometheus/procfs"
)

// Descendants lists root and every process below it, from each process's
// parent in /proc/PID/stat (Linux).
func Descendants(t testing.TB, root int) []int {
	t.Helper()
	procs, err := procfs.AllProcs()
	if err != nil {
		t.Error(err) // not Fatal: a test may call it from a goroutine of its own
		return nil
	}
	parent := map[int]int{}
	for _, p := range procs {
		// A process that exits while the list is read has no stat.
		if st, err := p.Stat(); err == nil {
			parent[p.PID] = st.PPID
		}
	}
	var out []int
	for pid := range parent {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
