//go:build linux

package server

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The shaper's system calls on its hot path go without the runtime's
// bookkeeping for calls that may block (RawSyscall): each is on a
// descriptor that never blocks (a non-blocking socket, a timerfd). A
// call through the bookkeeping wakes the runtime's monitor thread when it
// sleeps, and the monitor then polls every 20 µs for a millisecond; at a
// wake-up per packet it never sleeps long, and costs more CPU than the
// shaping.

func rawRead(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, b []byte) error {
	_, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return e
	}
	return nil
}

// rawTimerSet arms the timerfd fd to fire once, after spec.Value.
func rawTimerSet(fd int, spec *unix.ItimerSpec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
