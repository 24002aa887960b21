package telemetry

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Available is the memory this process may still take: the host's
// MemAvailable, and no more than its memory cgroup's limit leaves (a
// container's, a confined run's). False where it cannot tell: not Linux.
func Available() (int64, bool) {
	return available("/proc", "/sys", os.Getpid())
}

// available is Available of process pid on the proc and sys file systems
// mounted at procRoot and sysRoot.
func available(procRoot, sysRoot string, pid int) (int64, bool) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return 0, false
	}
	mi, err := fs.Meminfo()
	if err != nil || mi.MemAvailableBytes == nil {
		return 0, false
	}
	avail := int64(*mi.MemAvailableBytes)
	if dir, limit, _ := serverCgroup(procRoot, sysRoot, pid); limit > 0 {
		avail = min(avail, max(0, limit-cgroupUsed(dir)))
	}
	return avail, true
}

// cgroupUsed is what a memory cgroup's processes use, under either
// version's name; 0 when it cannot be read.
func cgroupUsed(dir string) int64 {
	for _, name := range []string{"memory.current", "memory.usage_in_bytes"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				return n
			}
		}
	}
	return 0
}
