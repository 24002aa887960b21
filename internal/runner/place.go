package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
)

// RoundRobin is the node affinity that puts VU id on node id mod n.
const RoundRobin = "round-robin"

// spread sets t's sessions to the run's isolation level, and says how
// the run's VUs go to its nodes (placement), saying it as a session goes
// to another node than its own.
func spread(t dbtarget.Target, r workload.Run, o Options) (func(ctx context.Context, id int) context.Context, error) {
	if err := Isolate(t, o); err != nil {
		return nil, err
	}
	place, err := placement(t, r, o)
	if s, ok := t.(dbtarget.Spread); ok && place != nil {
		var mu sync.Mutex
		told := map[string]bool{}
		s.OnMove(func(m dbtarget.Move) {
			mu.Lock()
			first := !told[m.From]
			told[m.From] = true
			mu.Unlock()
			if first {
				o.Warn(moveNote(m))
			}
		})
	}
	return place, err
}

// placed is where t's sessions went, for the document; nil on a target
// of one server.
func placed(t dbtarget.Target, o Options) *result.Placement {
	s, ok := t.(dbtarget.Spread)
	if !ok || len(s.Nodes()) < 2 {
		return nil
	}
	sessions, moves := s.Placed()
	p := &result.Placement{Affinity: o.NodeAffinity}
	for i, addr := range s.Nodes() {
		p.Nodes = append(p.Nodes, result.PlacementNode{Addr: addr, Sessions: sessions[i]})
	}
	at := map[[2]string]int{}
	for _, m := range moves {
		k := [2]string{m.From, m.To}
		if i, ok := at[k]; ok {
			p.Moves[i].Sessions++
			continue
		}
		at[k] = len(p.Moves)
		p.Moves = append(p.Moves, result.PlacementMove{From: m.From, To: m.To, Sessions: 1, Why: m.Why})
	}
	return p
}

// Isolate sets t's sessions to the run's isolation level, or says in one
// line why they cannot be: a run calls it as it opens its target, before
// anything is built or read.
func Isolate(t dbtarget.Target, o Options) error {
	level, err := dbtarget.ParseIsolation(o.Isolation)
	if err != nil {
		return err
	}
	return dbtarget.Isolate(t, level)
}

// CheckPlacement refuses, in one line, a node affinity that r on t
// cannot have, before anything runs.
func CheckPlacement(t dbtarget.Target, r workload.Run, o Options) error {
	_, err := placement(t, r, o)
	return err
}

// placement is how a run's VUs are spread over t's nodes, as
// driver.Config.Place: round-robin by VU (or pooled session), or by the
// workload's own key; nil on a target of one server. An affinity the
// workload has not, or asked of a target of one server, is refused.
func placement(t dbtarget.Target, r workload.Run, o Options) (func(ctx context.Context, id int) context.Context, error) {
	s, spread := t.(dbtarget.Spread)
	if !spread || len(s.Nodes()) < 2 {
		if o.NodeAffinity != RoundRobin {
			return nil, exitcode.Userf("--node-affinity %s: the target is one server; give a URL that names several nodes (HOST1:PORT1,HOST2:PORT2,...)", o.NodeAffinity)
		}
		return nil, nil
	}
	key := func(id int) int { return id }
	if o.NodeAffinity != RoundRobin {
		a, ok := r.(workload.Affine)
		name := ""
		if ok {
			name, key = a.Affinity()
		}
		switch {
		case !ok:
			return nil, exitcode.Userf("--node-affinity %s: this workload's virtual users have no key of their own; give %s", o.NodeAffinity, RoundRobin)
		case !strings.EqualFold(o.NodeAffinity, name):
			return nil, exitcode.Userf("--node-affinity %s: want %s or %s", o.NodeAffinity, RoundRobin, name)
		case o.Connections > 0:
			return nil, exitcode.Userf("--node-affinity %s keeps each virtual user's session on one node, and --connections lends sessions to any terminal: leave one of them out", name)
		}
	}
	return func(ctx context.Context, id int) context.Context { return dbtarget.WithNode(ctx, key(id)) }, nil
}

// moveNote is what a run says as the first session goes from a node to
// another than its key's.
func moveNote(m dbtarget.Move) string {
	return fmt.Sprintf("node %s did not take a session (%s): its sessions go to the next node that does, the first to %s", m.From, m.Why, m.To)
}
