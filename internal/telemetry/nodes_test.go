package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestNodeCPU: each node's CPU over the window is its mean over the
// whole window, weighted by each interval's length: node3, lost after
// the window's first interval, counts nothing for the rest. The server's
// CPU is the nodes' together. A recording without nodes (a server of its
// own, or an older document) has none, and its server's CPU is its tree's.
func TestNodeCPU(t *testing.T) {
	primary := 30.0
	r := &Recording{Window: [2]float64{10, 13}, Host: &HostRecord{Samples: []HostSample{
		{T: 10, DT: 1, Nodes: map[string]float64{"node1": 90, "node2": 90}}, // the start edge's own interval
		{T: 12, DT: 2, Server: &primary, Nodes: map[string]float64{"node1": 30, "node2": 6, "node3": 3}},
		{T: 13, DT: 1, Nodes: map[string]float64{"node1": 60, "node2": 9}},
	}}}
	s := Summarize(r)
	if pct, ok := s.Host.ServerCPU(); !ok || !near(pct, 49) {
		t.Errorf("the server's CPU %v (%v), want the nodes' 49", pct, ok)
	}
	got := s.Host.Nodes
	want := []NodeCPU{{"node1", 40, 60}, {"node2", 7, 9}, {"node3", 2, 3}}
	if len(got) != len(want) {
		t.Fatalf("nodes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || !near(got[i].Pct, want[i].Pct) || got[i].Peak != want[i].Peak {
			t.Errorf("node %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	var old Recording
	if err := json.Unmarshal([]byte(`{"window": [0, 2], "host": {"facts": {"online_cpus": 2},
		"samples": [{"t": 1, "dt": 1, "cpu": {"user": 50}, "client_pct": 10, "server_pct": 20}]}}`), &old); err != nil {
		t.Fatal(err)
	}
	h := Summarize(&old).Host
	if h == nil || h.Nodes != nil || old.Host.Facts.Nodes != nil {
		t.Fatalf("an older document's nodes: %+v", h)
	}
	if pct, ok := h.ServerCPU(); !ok || pct != 20 {
		t.Errorf("an older document's server CPU %v (%v), want its tree's 20", pct, ok)
	}
	if b, err := json.Marshal(old.Host.Samples[0]); err != nil || strings.Contains(string(b), "nodes_pct") {
		t.Errorf("a sample without nodes writes %s (%v)", b, err)
	}
}

// nodesSource is a Source whose server is one node of several: Counters
// fails where fail says, in turn, and Nodes counts its calls.
type nodesSource struct {
	Source
	fail  []bool
	nodes []Node
	calls int
}

func (s *nodesSource) Counters(context.Context) (map[string]float64, error) {
	fail := s.fail[0]
	s.fail = s.fail[1:]
	if fail {
		return nil, errors.New("no server")
	}
	return map[string]float64{Commits: 1}, nil
}

func (s *nodesSource) Nodes(context.Context) ([]Node, error) {
	s.calls++
	return s.nodes, nil
}

// TestNodesAfterAGap: the recorder asks the source for its nodes again
// once the database is read after a gap (a failover's), and only then;
// the host watches the nodes it names from then on.
func TestNodesAfterAGap(t *testing.T) {
	src := &nodesSource{fail: []bool{false, true, true, false, false}, nodes: []Node{{"node2", os.Getpid()}}}
	r := &Recorder{src: src, gapFrom: -1, started: time.Now(), host: NewHost(HostConfig{}),
		rec: Recording{Interval: 1, DB: &DBRecord{}, Host: &HostRecord{}, Unavailable: map[string]string{}}}
	defer r.host.Close()
	calls := []int{0, 0, 0, 1, 1}
	for i, want := range calls {
		r.sample(context.Background(), true)
		if src.calls != want {
			t.Fatalf("after read %d: %d calls of Nodes, want %d", i+1, src.calls, want)
		}
	}
	if len(r.rec.Gaps) != 1 {
		t.Errorf("gaps %+v, want the one", r.rec.Gaps)
	}
	if !reflect.DeepEqual(r.host.nodes, src.nodes) {
		t.Errorf("the host watches %+v, want %+v", r.host.nodes, src.nodes)
	}
}
