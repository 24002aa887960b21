package mariadb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// greetingWait bounds the wait for a server's greeting on the first
// connection Open makes. A MariaDB server greets within moments of taking
// a connection; a PostgreSQL server never speaks first, and would keep a
// MySQL client waiting for its own authentication timeout (60 s).
const greetingWait = 3 * time.Second

// greeting watches the first connection Open makes, and says what answered
// there when it was not MariaDB, or why nothing did.
type greeting struct {
	mu  sync.Mutex
	why string
}

func (g *greeting) set(why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.why == "" {
		g.why = why
	}
}

// reason is what went wrong, in place of the driver's words; "" when the
// connection was not the problem.
func (g *greeting) reason() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}

var errNoGreeting = errors.New("no MariaDB greeting")

// dial connects as the driver would, naming the address and the timeout
// when the connection could not be made in time, and wraps the connection
// so that its first packet is checked.
func (g *greeting) dial(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dbtarget.Dialer().DialContext(ctx, network, addr)
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			g.set(fmt.Sprintf("%s did not answer within %s", addr, timeout))
		}
		if err != nil {
			return nil, err
		}
		return &greetedConn{Conn: c, g: g, addr: addr}, nil
	}
}

// greetedConn checks the first bytes a server sends: a MySQL-protocol
// packet's header (a 3-byte length, sequence number 0) and a handshake
// (protocol version 10) or an error packet (0xff, such as "Too many
// connections").
type greetedConn struct {
	net.Conn
	g    *greeting
	addr string
	head []byte
	done bool
}

func (c *greetedConn) Read(b []byte) (int, error) {
	if c.done {
		return c.Conn.Read(b)
	}
	if len(c.head) == 0 {
		c.Conn.SetReadDeadline(time.Now().Add(greetingWait))
	}
	n, err := c.Conn.Read(b)
	c.head = append(c.head, b[:min(n, 5-len(c.head))]...)
	switch {
	case len(c.head) == 5:
		c.done = true
		c.Conn.SetReadDeadline(time.Time{})
		if c.head[3] != 0 || c.head[4] != 10 && c.head[4] != 0xff {
			c.g.set(c.addr + " answered, but not as MariaDB")
			return 0, errNoGreeting
		}
	case errors.Is(err, os.ErrDeadlineExceeded) && len(c.head) == 0:
		c.g.set(fmt.Sprintf("%s took the connection, but did not answer as MariaDB within %s", c.addr, greetingWait))
	case err != nil:
		c.g.set(c.addr + " closed the connection before a whole MariaDB greeting")
	}
	return n, err
}
