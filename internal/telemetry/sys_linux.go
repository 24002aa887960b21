package telemetry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openCycles opens a counter of one CPU's cycles, whatever runs on it,
// that reports how long it was enabled and running, to scale for
// multiplexing.
func openCycles(cpu int) (int, error) {
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_HARDWARE,
		Config:      unix.PERF_COUNT_HW_CPU_CYCLES,
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
	}
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP):
		// Many hypervisors give their guests no PMU.
		return -1, fmt.Errorf("%w: the CPU offers no cycle counter", err)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		// A CPU-wide counter needs root (CAP_PERFMON) or a paranoid
		// setting of at most 0.
		if b, rerr := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); rerr == nil {
			return -1, fmt.Errorf("%w; perf_event_paranoid is %s", err, strings.TrimSpace(string(b)))
		}
	}
	return fd, err
}

// readCycles reads a counter opened by openCycles into buf, which is kept
// so that a sample allocates nothing for it.
func readCycles(fd int, buf *[24]byte) (perfCount, error) {
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return perfCount{}, err
	}
	if n != len(buf) {
		return perfCount{}, fmt.Errorf("perf counter read %d bytes, want %d", n, len(buf))
	}
	return perfCount{
		value:   binary.NativeEndian.Uint64(buf[0:]),
		enabled: binary.NativeEndian.Uint64(buf[8:]),
		running: binary.NativeEndian.Uint64(buf[16:]),
	}, nil
}

func closeFD(fd int) error { return unix.Close(fd) }

// deviceNumbers are the "major:minor" of the device a path lives on
// (st_dev) and, for a device file, of the device it is (st_rdev).
func deviceNumbers(path string) (dev, rdev string, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", "", err
	}
	return fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)),
		fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)), nil
}

// threadCPU is the CPU time the calling thread has used; ok is false
// where the OS does not say.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
