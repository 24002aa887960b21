package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
)

// FreeLoopbackPort is a TCP port on 127.0.0.1 that nothing listens on
// now. Another process may take it before the server binds it; a start
// that finds it in use tries another.
func FreeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Live is where a managed server that this process started, or found
// running, listens. It has its own lock, so that Running, Port and the
// URLs can be read while a Start or Stop holds the server's.
type Live struct {
	mu      sync.Mutex
	running bool
	port    int
	// last is the port of the server's last life, which its next start
	// takes again where it can (see launch).
	last int
	// fixed is the one port the server may take, a node of a cluster's:
	// the others know it there (see Fix).
	fixed   int
	socket  string // as the kind's URLs name it: its directory, or the socket itself
	tempDir string // a socket directory made outside the server's directory
}

// Listen records the socket a start is about to use, in directory dir;
// temp says MakeSocketDir made dir outside the server's directory, for
// Down to remove.
func (l *Live) Listen(socket, dir string, temp bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.socket, l.tempDir = socket, ""
	if temp {
		l.tempDir = dir
	}
}

// Fix makes every start take port, and fail when it is taken: a node of
// a cluster is found by the other nodes where they were told it is.
func (l *Live) Fix(port int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fixed, l.last = port, port
}

// Up records that the server runs, on port.
func (l *Live) Up(port int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running, l.port = true, port
}

// Down records that the server is not running, and removes a temporary
// socket directory.
func (l *Live) Down() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.port != 0 {
		l.last = l.port
	}
	l.running, l.port = false, 0
	if l.tempDir != "" {
		os.RemoveAll(l.tempDir)
		l.socket, l.tempDir = "", ""
	}
}

// Running reports whether the server was started or found running, and
// not stopped since.
func (l *Live) Running() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

// Port is the running server's loopback TCP port, 0 when stopped.
func (l *Live) Port() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.port
}

// Socket is the running server's socket, as Listen recorded it.
func (l *Live) Socket() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.socket
}

// Launch is the end of every kind's Start, once its own checks are done
// and the socket is chosen: start runs the server on the loopback port of
// its last life in this process, else on a free one, and again on another
// while it fails because the port was taken (inUse;
// a free port can be taken between choosing it and the server binding
// it), at most five times; record then writes the state file. When either
// fails, kill stops a server that came up (without the state file another
// process could not find it, and this one would leave it running unseen),
// and the socket directory and the cgroup go.
func Launch(ctx context.Context, live *Live, c *Confined,
	start func(port int) (inUse bool, err error), record func() error, kill func()) error {
	err := launch(ctx, live, start)
	if err == nil {
		if err = record(); err != nil {
			kill()
		}
	}
	if err != nil {
		live.Down()
		_ = c.Remove() // the start's error is the news; a busy cgroup is reused
	}
	return err
}

func launch(ctx context.Context, live *Live, start func(port int) (bool, error)) error {
	var err error
	// A server restarted by this process comes back where its clients
	// knew it, so that they reconnect to it as they would after a crash
	// that a service manager restarted; a free port is the fallback.
	live.mu.Lock()
	port, fixed := live.last, live.fixed
	live.mu.Unlock()
	if fixed != 0 {
		inUse, err := start(fixed)
		if err == nil {
			live.Up(fixed)
		} else if inUse {
			err = fmt.Errorf("%w (port %d, which the other nodes of its cluster know it by)", err, fixed)
		}
		return err
	}
	for range 5 {
		if port == 0 {
			var perr error
			if port, perr = FreeLoopbackPort(); perr != nil {
				return perr
			}
		}
		var inUse bool
		if inUse, err = start(port); err == nil {
			live.Up(port)
			return nil
		}
		if !inUse || ctx.Err() != nil {
			return err
		}
		port = 0
	}
	return err
}
