package server

import (
	"fmt"
	"os"
	"strings"
)

// IsZombie reports whether pid has exited and waits to be reaped: where
// PID 1 is slow to reap orphans (some containers and VMs), a killed
// server lingers as a zombie that looks alive to a signal 0.
func IsZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// HugePagesTotal reads HugePages_Total from a /proc/meminfo text; -1 when
// it cannot tell, so that only a known zero stops a sweep.
func HugePagesTotal(meminfo string) int {
	for _, line := range strings.Split(meminfo, "\n") {
		if v, ok := strings.CutPrefix(line, "HugePages_Total:"); ok {
			var n int
			if _, err := fmt.Sscan(strings.TrimSpace(v), &n); err == nil {
				return n
			}
		}
	}
	return -1
}

// ReadMeminfo is /proc/meminfo's text, "" where there is none.
func ReadMeminfo() string {
	b, _ := os.ReadFile("/proc/meminfo")
	return string(b)
}
