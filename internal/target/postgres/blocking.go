package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// blockingConn is a connection read and written with plain blocking
// system calls instead of Go's network poller.
type blockingConn struct {
	fd            int
	local, remote net.Addr
	once          sync.Once
	closeErr      error
}

// dialBlocking connects with the standard dialer (for its timeouts and
// address handling), then takes over a duplicate of the socket in
// blocking mode and closes the poller's copy.
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, errors.New("connection has no file descriptor")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &blockingConn{fd: fd, local: c.LocalAddr(), remote: c.RemoteAddr()}, nil
}

func (c *blockingConn) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(c.fd, b)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, timeoutError{}
		case err != nil:
			return 0, &net.OpError{Op: "read", Net: c.remote.Network(), Addr: c.remote, Err: err}
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := unix.Write(c.fd, b[done:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return done, timeoutError{}
		case err != nil:
			return done, &net.OpError{Op: "write", Net: c.remote.Network(), Addr: c.remote, Err: err}
		}
		done += n
	}
	return done, nil
}

func (c *blockingConn) Close() error {
	c.once.Do(func() { c.closeErr = unix.Close(c.fd) })
	return c.closeErr
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.timeout(unix.SO_RCVTIMEO, t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.timeout(unix.SO_SNDTIMEO, t) }

// timeout: a deadline already past is how pgx interrupts a call whose
// context ended; a blocked read(2) cannot be interrupted, so the socket is
// shut down and the connection is lost. A future deadline becomes the
// socket's timeout.
func (c *blockingConn) timeout(opt int, t time.Time) error {
	var d time.Duration
	if !t.IsZero() {
		d = time.Until(t)
		if d <= 0 {
			return unix.Shutdown(c.fd, unix.SHUT_RDWR)
		}
	}
	tv := unix.NsecToTimeval(d.Nanoseconds())
	return unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &tv)
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
