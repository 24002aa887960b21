package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
)

// AuditDurability looks up on t every change the log at path names, then
// runs w's consistency check, whose lines go to progress. On a target of
// several nodes that all take writes it does both on every node that
// answers, each read on its own: every node must hold every change.
func AuditDurability(ctx context.Context, w workload.Workload, t dbtarget.Target, path string, progress io.Writer) (*result.Durability, error) {
	a, ok := w.(workload.DurabilityAuditor)
	if !ok {
		return nil, exitcode.Userf("%s has no durability audit", w.Name())
	}
	s, spread := t.(dbtarget.Spread)
	if !spread || len(s.Nodes()) < 2 {
		return auditOn(ctx, a, w, t, path, progress)
	}
	var whole *result.Durability
	var nodes []result.NodeDurability
	for i, addr := range s.Nodes() {
		fmt.Fprintf(progress, "Node %s:\n", addr)
		d, err := auditOn(dbtarget.OnNode(ctx, i), a, w, t, path, progress)
		node := result.NodeDurability{Addr: addr}
		switch {
		case err != nil && t.Classify(err) == dbtarget.ErrConnLost:
			node.Lost = human.OneLine(err)
			fmt.Fprintf(progress, "  not audited, lost: %s\n", node.Lost)
		case err != nil:
			return nil, fmt.Errorf("node %s: %w", addr, err)
		default:
			node.Missing, node.Consistent = d.Missing, d.Consistent
			whole = worse(whole, d)
		}
		nodes = append(nodes, node)
	}
	if whole == nil {
		return nil, exitcode.Userf("durability audit: no node of %s answered", t.URL())
	}
	whole.Nodes = nodes
	return whole, nil
}

// worse is the audit of the two that found more missing, or the one
// inconsistent.
func worse(a, b *result.Durability) *result.Durability {
	if a == nil {
		return b
	}
	if b.Missing > a.Missing || b.Consistent != nil && !*b.Consistent && (a.Consistent == nil || *a.Consistent) {
		return b
	}
	return a
}

// auditOn audits the log at path on t (one node, where ctx names it).
func auditOn(ctx context.Context, a workload.DurabilityAuditor, w workload.Workload, t dbtarget.Target, path string, progress io.Writer) (*result.Durability, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, exitcode.Userf("the acknowledgement log: %v", err)
	}
	defer f.Close()
	fmt.Fprintf(progress, "Looking up every change the database acknowledged, from %s\n", path)
	d, err := a.AuditDurability(ctx, t, f)
	if errors.Is(err, workload.ErrNoSchema) {
		return nil, workload.NoSchema(w, t)
	}
	if err != nil {
		return nil, fmt.Errorf("durability audit: %w", err)
	}
	var consistent *bool
	if ch, ok := w.(workload.Checker); ok {
		fmt.Fprintln(progress, "Consistency check after the run:")
		pass, err := ch.Check(ctx, t, progress)
		if err != nil {
			return nil, fmt.Errorf("consistency check: %w", err)
		}
		consistent = &pass
	}
	return result.NewDurability(path, d, consistent), nil
}
