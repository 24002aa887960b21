package experiment

import (
	"fmt"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
	"go.yaml.in/yaml/v3"
)

// thresholds reads the spec's thresholds section: a list of expectations
// every run is held to, as dbrig run --threshold takes them. Each is
// checked against the workload's names with the rest of the spec.
func (p parser) thresholds(n *yaml.Node) ([]Param, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "thresholds: want a list, such as ['errors<0.1%%', 'TYPE.p95<5ms'], got %s", describe(n))
	}
	var out []Param
	for _, item := range n.Content {
		v, err := p.scalar(item, "thresholds")
		if err != nil {
			return nil, err
		}
		out = append(out, Param{Value: v, line: item.Line})
	}
	return out, nil
}

// thresholds checks the spec's thresholds against what its runs declare:
// the metrics and the transaction types of its workload and of those it
// runs with.
func (c *checker) thresholds() error {
	s := c.s
	ws := s.workloads()
	info, txs := workload.MixInfo(ws), workload.MixTxTypes(ws)
	s.Thresholds = nil
	for _, e := range s.thresholdsWritten {
		t, err := result.ParseThreshold(e.Value, info, txs)
		if err == nil && t.What == result.LostAcksKey && !s.Audits() {
			err = fmt.Errorf("lost_acks judges the durability audit: have every run audited with run: {%s: true}", AuditKey)
		}
		if err != nil {
			return c.errf(e.line, "thresholds: %q: %v", e.Value, err)
		}
		s.Thresholds = append(s.Thresholds, t)
	}
	return nil
}

// ThresholdExprs are the thresholds as the sweep document keeps them.
func (s *Spec) ThresholdExprs() []string {
	var out []string
	for _, t := range s.Thresholds {
		out = append(out, t.Expr)
	}
	return out
}

// pointThresholds keeps the verdicts in d, repetition rep of point pt's
// run, in the point, by repetition.
func pointThresholds(pt *result.SweepPoint, rep int, d *result.Document) {
	if len(d.Thresholds) == 0 {
		return
	}
	for len(pt.Thresholds) < rep {
		pt.Thresholds = append(pt.Thresholds, nil)
	}
	pt.Thresholds[rep-1] = d.Thresholds
}
