//go:build unix

package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcSample is one reading of a process's resident set and CPU time,
// from Linux's /proc.
type ProcSample struct {
	At  time.Time
	RSS int64         // VmRSS, in bytes
	CPU time.Duration // user + system so far
}

// clockTick is Linux's USER_HZ, the unit of /proc/PID/stat's times: 100
// on every architecture Go runs on.
const clockTick = 10 * time.Millisecond

// SampleProc reads pid's resident set and CPU time every interval until
// ctx ends, and returns the readings; none where there is no /proc.
// Watched's watch can run it.
func SampleProc(ctx context.Context, pid int, every time.Duration) []ProcSample {
	var out []ProcSample
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if s, err := readProc(pid); err == nil {
			out = append(out, s)
		}
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
		}
	}
}

// readProc reads one sample of pid.
func readProc(pid int) (ProcSample, error) {
	s := ProcSample{At: time.Now()}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return s, err
			}
			s.RSS = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after it, where utime and stime are the 12th and 13th.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 13 || s.RSS == 0 {
		return s, fmt.Errorf("/proc/%d: no resident set or times", pid)
	}
	for _, f := range fields[11:13] {
		ticks, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return s, err
		}
		s.CPU += time.Duration(ticks) * clockTick
	}
	return s, nil
}
