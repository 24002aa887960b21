//go:build linux

package postgres

import (
	"context"
	"io"
	"net"
	"syscall"
	"unsafe"
)

// quietConn reads and writes its socket with raw system calls, while still
// waiting for readiness in Go's network poller.
//
// Why: a virtual user spends nearly all its time waiting on one round trip,
// so the client keeps going idle. Every ordinary (entersyscall) read or
// write on an idle Go runtime wakes the sysmon thread, which then sleeps
// and wakes again in 20 µs steps: on this 2-core VM that was two of the
// three context switches per transaction, and most of the client's CPU.
// The socket is non-blocking, so a raw system call never blocks while
// holding the scheduler, and readiness still comes from the poller, which
// also keeps deadlines (pgx's cancellation) working.
type quietConn struct {
	net.Conn
	rc syscall.RawConn
}

// dialQuiet dials as pgx would and wraps the connection if it has a socket.
// The raw read and write system calls are Linux's; elsewhere dialQuiet
// (quiet_other.go) returns the plain connection.
func dialQuiet(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	return &quietConn{Conn: c, rc: rc}, nil
}

func (c *quietConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // not ready: wait in the poller
			}
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

func (c *quietConn) Write(b []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for done < len(b) {
			var n uintptr
			rest := b[done:]
			n, _, errno = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
			switch errno {
			case 0:
				done += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				errno = 0
				return false // the send buffer is full: wait in the poller
			default:
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, err
	case errno != 0:
		return done, c.opError("write", errno)
	}
	return done, nil
}

func (c *quietConn) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: c.RemoteAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errno}
}
