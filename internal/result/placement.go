package result

import (
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
)

// Placement is how a run's sessions went to the nodes of a target of
// several that all take writes.
type Placement struct {
	// Affinity is what picked each VU's node: "round-robin", or the
	// name of the workload's own key (its Affinity).
	Affinity string          `json:"affinity"`
	Nodes    []PlacementNode `json:"nodes"`
	// Moves are the sessions that went to another node than their own,
	// which did not take them (a node lost), by the pair of nodes.
	Moves []PlacementMove `json:"moves,omitempty"`
}

// PlacementNode is one node and the sessions it took, over the run
// (those reopened after a loss included).
type PlacementNode struct {
	Addr     string `json:"addr"`
	Sessions int    `json:"sessions"`
}

// PlacementMove is the sessions that went from one node to another.
type PlacementMove struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Sessions int    `json:"sessions"`
	// Why is the first one's reason, in one line.
	Why string `json:"why"`
}

// Line says where the sessions went, in one line.
func (p *Placement) Line() string {
	var on []string
	for _, n := range p.Nodes {
		on = append(on, fmt.Sprintf("%s %s", n.Addr, human.Thousands(float64(n.Sessions))))
	}
	s := fmt.Sprintf("Sessions opened by node (%s): %s", p.Affinity, strings.Join(on, ", "))
	for _, m := range p.Moves {
		s += fmt.Sprintf("; %s moved from %s to %s (%s)", human.Thousands(float64(m.Sessions)), m.From, m.To, m.Why)
	}
	return s
}
