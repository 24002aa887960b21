//go:build unix

package postgres

import (
	"testing"

	"github.com/dbrig/dbrig/internal/server"
)

// TestPatroniForget: a cluster stopped, or its lost node made anew, has
// no Patroni on those nodes for a wait for a leader to watch, so that a
// start again in the same process (a sweep's, after a failover) waits
// for the first node's leader rather than take the others' for ended.
func TestPatroniForget(t *testing.T) {
	h := &patroni{c: &Cluster{st: clusterState{Nodes: []nodeState{
		{Name: "node1", Patroni: &server.Daemon{}}, {Name: "node2", Patroni: &server.Daemon{}},
	}}}, started: map[string]bool{"node1": true, "node2": true}}
	if err := h.ended(""); err == nil {
		t.Fatal("a Patroni this process started, and that runs no more, is not named ended")
	}
	for i := range h.c.st.Nodes {
		h.forget(&h.c.st.Nodes[i])
	}
	if err := h.ended(""); err != nil {
		t.Errorf("after its nodes were stopped: %v", err)
	}
	if h.c.st.Nodes[0].Patroni != nil || len(h.started) != 0 {
		t.Errorf("nodes %+v, started %v; want neither a Patroni nor watched", h.c.st.Nodes, h.started)
	}
}

// TestPatroniWhy: a Patroni that gave up is explained by its last error
// lines, not only by the traceback that ends its log.
func TestPatroniWhy(t *testing.T) {
	log := `2026-12-02 09:45:01,100 INFO: trying to bootstrap a new cluster
2026-12-02 09:45:03,200 ERROR: postmaster is not running
2026-12-02 09:45:03,201 INFO: removing initialize key after failed attempt to bootstrap the cluster
Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/patroni/ha.py", line 1476, in cancel_initialization
patroni.exceptions.PatroniFatalException: 'Failed to bootstrap cluster'
`
	got := patroniWhy(log)
	want := "ERROR: postmaster is not running; patroni.exceptions.PatroniFatalException: 'Failed to bootstrap cluster'"
	if got != want {
		t.Errorf("patroniWhy = %q, want %q", got, want)
	}
}
