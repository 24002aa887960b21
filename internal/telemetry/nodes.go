package telemetry

import (
	"cmp"
	"context"
	"slices"
)

// Nodes: the servers that the run's server is one of (a primary and its
// replicas), each one's process tree read on this host with the server's,
// so that the CPU a replica spends receiving and replaying the primary's
// log counts as the cluster's work, not as another process's.

// NodeSource is a Source whose server is one node of several: Nodes
// names every node that answers, the one the source reads included, with
// its root process on this host; none for a server of its own.
type NodeSource interface {
	Nodes(ctx context.Context) ([]Node, error)
}

// Node is one node of the server a run is on.
type Node struct {
	Name string `json:"name"`
	// PID is its root process on this host; 0 where it is elsewhere or
	// not known.
	PID int `json:"pid,omitempty"`
}

// NodeCPU is one node's process tree over the measured window, in
// percent of all CPUs, as HostSummary.Server is: its mean over the whole
// window, a node gone for part of it counting nothing for that part, and
// its busiest interval.
type NodeCPU struct {
	Name      string
	Pct, Peak float64
}

// ServerCPU is the share of all CPUs the server's processes kept busy
// over the window: on a server of several nodes, all of theirs on this
// host together (they share its CPUs, and a replica's receiving and
// replaying the primary's log is the server's work too), else the
// server's own tree's; false where neither was read.
func (h *HostSummary) ServerCPU() (float64, bool) {
	if len(h.Nodes) > 0 {
		var pct float64
		for _, n := range h.Nodes {
			pct += n.Pct
		}
		return pct, true
	}
	if h.Server == nil {
		return 0, false
	}
	return *h.Server, true
}

// nodeCPU is each node's mean over the samples in, whose total time is
// total, by name; none where no sample read a node.
func nodeCPU(in []HostSample, total float64) []NodeCPU {
	byName := map[string]*NodeCPU{}
	for _, hs := range in {
		for name, pct := range hs.Nodes {
			n := byName[name]
			if n == nil {
				n = &NodeCPU{Name: name}
				byName[name] = n
			}
			n.Pct += pct * hs.DT / total
			n.Peak = max(n.Peak, pct)
		}
	}
	var out []NodeCPU
	for _, n := range byName {
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b NodeCPU) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
