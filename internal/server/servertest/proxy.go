//go:build unix

package servertest

import (
	"net"
	"sync"
	"testing"
)

// Proxy passes TCP connections on to a server's address, until the test
// freezes it: then, as a proxy or a network that leaves connections
// half-open, it passes nothing more either way and closes nothing, so the
// client's writes are taken and its reads never answered; connections
// made meanwhile are taken and left as silent.
type Proxy struct {
	// Addr is where clients connect: 127.0.0.1 and a free port.
	Addr string
	to   string
	ln   net.Listener

	mu     sync.Mutex
	frozen chan struct{} // closed while passing; open while frozen
	conns  []net.Conn
}

// NewProxy starts a proxy to the server at addr (host:port), closed when
// the test ends.
func NewProxy(t testing.TB, addr string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), to: addr, ln: ln, frozen: make(chan struct{})}
	close(p.frozen)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Freeze stops passing anything on, from now on.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.frozen:
		p.frozen = make(chan struct{})
	default:
	}
}

// passing waits while the proxy is frozen.
func (p *Proxy) passing() {
	p.mu.Lock()
	ch := p.frozen
	p.mu.Unlock()
	<-ch
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		go p.serve(c)
	}
}

func (p *Proxy) serve(c net.Conn) {
	p.passing()
	s, err := net.Dial("tcp", p.to)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, s)
	p.mu.Unlock()
	go p.pass(s, c)
	p.pass(c, s)
}

// pass copies from src to dst a read at a time, each passed on only
// while the proxy is not frozen.
func (p *Proxy) pass(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		p.passing()
		n, err := src.Read(buf)
		if n > 0 {
			p.passing()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// close ends the proxy and every connection through it.
func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	select {
	case <-p.frozen:
	default:
		close(p.frozen)
	}
}
