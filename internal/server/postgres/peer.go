//go:build unix

package postgres

import "time"

// loopback is where every managed server listens, and where a server of
// its own is reached.
const loopback = "127.0.0.1"

// peering is what a node of a cluster has that a server of its own has
// not: an address of its own on the cluster's network, where the other
// nodes and the clients reach it, and the network namespace its
// processes start in. A nil peering is a server of its own, on loopback.
type peering struct {
	// name is the node's name in the cluster, which it starts with as its
	// cluster_name: a client that reaches each node of the cluster's URL
	// on its own (the telemetry's) asks it its name, and ps shows it in
	// the titles of the node's processes.
	name string
	// at is the node's address; "" is loopback, where a node in the
	// host's namespace without a network of its cluster's listens.
	at string
	// listen are the addresses it listens on besides loopback.
	listen []string
	// start runs fn where the node's processes start: inside its
	// namespace; nil runs it here.
	start func(fn func() error) error
	// delay is what the node's link adds to every packet it sends.
	delay time.Duration
}

func (p *peering) addr() string {
	if p == nil || p.at == "" {
		return loopback
	}
	return p.at
}

// settings are the node's own settings, which every start of it passes
// before the user's, so that a user's cluster_name still wins.
func (p *peering) settings() []string {
	if p == nil || p.name == "" {
		return nil
	}
	return []string{"-c", "cluster_name=" + p.name}
}

func (p *peering) listens() []string {
	if p == nil {
		return nil
	}
	return p.listen
}

func (p *peering) in(fn func() error) error {
	if p == nil || p.start == nil {
		return fn()
	}
	return p.start(fn)
}
