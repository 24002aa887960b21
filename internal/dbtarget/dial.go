package dbtarget

import (
	"context"
	"net"
	"sync"
	"time"
)

// Dialer is how every target's connections to a server are made: with
// TCP keepalives that find a peer gone quiet on an idle connection within
// about 20 s (Go's default takes over two minutes), and, where the system
// has it, a user timeout that fails a connection whose sent data has gone
// unacknowledged for ReconnectLimit (a cut network, a host gone). Neither
// finds a server that is frozen, or a proxy that acknowledges and passes
// nothing on: the driver's deadlines, from --lost-after, do.
func Dialer() *net.Dialer {
	return &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 5 * time.Second, Count: 3},
		Control:         userTimeout(ReconnectLimit),
	}
}

// Severer is a Target whose database driver may block on a connection
// past its call's cancellation (go-sql-driver/mysql reads the rest of a
// result without watching the context), so that a call on a server that
// answers nothing would never return. Sever closes every connection the
// target has open, in use or not: such calls then fail at once.
type Severer interface {
	Sever()
}

// Conns dials with Dialer and keeps every connection it made and has not
// seen closed, for a Severer. The zero value is ready to use.
type Conns struct {
	mu   sync.Mutex
	open map[*severable]struct{}
}

// Dial dials as Dialer does, keeping the connection.
func (cs *Conns) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := Dialer().DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	s := &severable{Conn: c, of: cs}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.open == nil {
		cs.open = map[*severable]struct{}{}
	}
	cs.open[s] = struct{}{}
	return s, nil
}

// Sever closes every connection Dial made that is still open.
func (cs *Conns) Sever() {
	cs.mu.Lock()
	open := cs.open
	cs.open = nil
	cs.mu.Unlock()
	for s := range open {
		s.Conn.Close()
	}
}

// severable is a connection that Conns keeps until it is closed.
type severable struct {
	net.Conn
	of *Conns
}

func (s *severable) Close() error {
	s.of.mu.Lock()
	delete(s.of.open, s)
	s.of.mu.Unlock()
	return s.Conn.Close()
}
