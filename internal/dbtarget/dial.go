package dbtarget

import (
	"net"
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
