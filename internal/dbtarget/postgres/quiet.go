//go:build linux

package postgres

import (
	"context"
	"io"
	"net"
	"syscall"
	"unsafe"

	"github.com/dbrig/dbrig/internal/dbtarget"
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
	// r and w are the read and the write in hand, and read and write
	// their functions for rc, made once: a closure made per call would be
	// allocated per call. pgx may read (in its background reader) while
	// it writes, but never reads twice, or writes twice, at once.
	r, w        rawIO
	read, write func(fd uintptr) bool
}

// rawIO is a read or write in hand: its buffer, the bytes done, and the
// system call's error.
type rawIO struct {
	b     []byte
	done  int
	errno syscall.Errno
}

// dialQuiet dials as pgx would and wraps the connection if it has a socket.
// The raw read and write system calls are Linux's; elsewhere dialQuiet
// (quiet_other.go) returns the plain connection.
func dialQuiet(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := dbtarget.Dialer().DialContext(ctx, network, addr)
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
	q := &quietConn{Conn: c, rc: rc}
	q.read, q.write = q.r.read, q.w.write
	return q, nil
}

func (c *quietConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.r = rawIO{b: b}
	err := c.rc.Read(c.read)
	n, errno := c.r.done, c.r.errno
	c.r.b = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read reads once into r.b, when fd is ready.
func (r *rawIO) read(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.b))), uintptr(len(r.b)))
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // not ready: wait in the poller
		}
		r.done, r.errno = int(n), errno
		return true
	}
}

func (c *quietConn) Write(b []byte) (int, error) {
	c.w = rawIO{b: b}
	err := c.rc.Write(c.write)
	done, errno := c.w.done, c.w.errno
	c.w.b = nil
	switch {
	case err != nil:
		return done, err
	case errno != 0:
		return done, c.opError("write", errno)
	}
	return done, nil
}

// write writes all of w.b, waiting for fd to be ready as needed.
func (w *rawIO) write(fd uintptr) bool {
	for w.done < len(w.b) {
		rest := w.b[w.done:]
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
		switch errno {
		case 0:
			w.done += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // the send buffer is full: wait in the poller
		default:
			w.errno = errno
			return true
		}
	}
	return true
}

func (c *quietConn) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: c.RemoteAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errno}
}
