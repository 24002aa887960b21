package telemetry

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// unlimited is above any memory limit a cgroup really has: v1 writes
// "no limit" as a number near 2^63.
const unlimited = 1 << 62

// serverCgroup finds the memory and cpuset cgroups of the server's root
// process, from /proc/PID/cgroup, so that a run against a server confined
// by whoever started it (dbrig server start --memory, a container) knows
// the memory and CPUs the server may use: the memory cgroup's directory,
// its limit (0 when none) and the cpuset's CPUs ("" when all of them).
func serverCgroup(procRoot, sysRoot string, pid int) (memDir string, limit int64, cpus string) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return "", 0, ""
	}
	root := filepath.Join(sysRoot, "fs", "cgroup")
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// "4:memory:/dbrig/x" (v1) or "0::/dbrig/x" (v2).
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[2] == "/" {
			continue
		}
		controllers := strings.Split(f[1], ",")
		for _, c := range []struct {
			name, v1, v2 string
		}{{"memory", "memory.limit_in_bytes", "memory.max"}, {"cpuset", "cpuset.cpus", "cpuset.cpus.effective"}} {
			dir, file := filepath.Join(root, c.name, f[2]), c.v1
			if f[1] == "" {
				dir, file = filepath.Join(root, f[2]), c.v2
				if _, err := os.Stat(dir); err != nil {
					dir = filepath.Join(root, "unified", f[2])
				}
			} else if !slices.Contains(controllers, c.name) {
				continue
			}
			v, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				continue
			}
			val := strings.TrimSpace(string(v))
			switch c.name {
			case "memory":
				if n, err := strconv.ParseInt(val, 10, 64); err == nil && n < unlimited {
					memDir, limit = dir, n
				}
			case "cpuset":
				cpus = val
			}
		}
	}
	return memDir, limit, cpus
}
