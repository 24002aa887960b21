package dbtarget

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// Endpoint is where a database server listens, as a URL names it: a TCP
// host and port, or a unix socket file. Two URLs reach the same server
// when their endpoints are equal.
type Endpoint struct {
	// Network is "tcp" or "unix".
	Network string
	// Address is "host:port", with every name of the loopback interface
	// written as 127.0.0.1, or the socket file's clean path.
	Address string
}

func (e Endpoint) String() string { return e.Network + " " + e.Address }

// TCP is the endpoint of host and port.
func TCP(host string, port int) Endpoint {
	if host == "localhost" || net.ParseIP(host).IsLoopback() {
		host = "127.0.0.1"
	}
	return Endpoint{"tcp", net.JoinHostPort(strings.ToLower(host), strconv.Itoa(port))}
}

// Unix is the endpoint of the socket file at path.
func Unix(path string) Endpoint {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return Endpoint{"unix", path}
}

// EndpointOf is where the server that url names listens, and the kind of
// target that accepts url. located is false for a kind with no server of
// its own (an SQLite file), or a url no kind accepts.
func EndpointOf(url string) (kind string, e Endpoint, located bool, err error) {
	o, ok := lookup(url)
	if !ok || o.Endpoint == nil {
		return o.Kind, Endpoint{}, false, nil
	}
	e, err = o.Endpoint(url)
	return o.Kind, e, err == nil, err
}
