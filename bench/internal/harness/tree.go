//go:build unix

package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// TreeCPU is the CPU time (user + system) the process tree rooted at pid
// has used so far, from Linux's /proc: every live member's own time and
// the time of the children it reaped. A member that exits moves its time
// into its parent's reaped time, so the sum only grows as the tree works
// and the difference of two readings is the tree's CPU between them, a
// server's backends that came and went included.
func TreeCPU(root int) (time.Duration, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	parent, own := map[int]int{}, map[int]int64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, ticks, err := statTicks(pid)
		if err != nil {
			continue // exited since the listing
		}
		parent[pid], own[pid] = ppid, ticks
	}
	if _, ok := own[root]; !ok {
		return 0, fmt.Errorf("process %d is gone", root)
	}
	var sum int64
	for pid, ticks := range own {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				sum += ticks
				break
			}
		}
	}
	return time.Duration(sum) * clockTick, nil
}

// statTicks reads a process's parent and its utime, stime, cutime and
// cstime, in clock ticks, from /proc/PID/stat.
func statTicks(pid int) (ppid int, ticks int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields count from after the command's closing parenthesis: state,
	// ppid, ... utime (12th), stime, cutime, cstime.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(fields) < 15 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	for _, f := range fields[11:15] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, 0, err
		}
		ticks += v
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, ticks, err
}
