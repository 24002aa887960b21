package server

import (
	"strings"
	"testing"
	"time"
)

func TestRegistry(t *testing.T) {
	if _, err := Lookup("postgres"); err == nil || !strings.Contains(err.Error(), "need a unix host") {
		t.Errorf("with no kinds registered: %v", err)
	}
	if Default() != "" {
		t.Errorf("default kind %q with none registered", Default())
	}
	Register(Kind{Name: "b", Default: true})
	Register(Kind{Name: "a"})
	t.Cleanup(func() { kinds = map[string]Kind{} })
	if got := strings.Join(Kinds(), ","); got != "a,b" {
		t.Errorf("Kinds() = %s, want a,b", got)
	}
	if Default() != "b" {
		t.Errorf("Default() = %q, want b", Default())
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "both claim to be the default") {
				t.Errorf("a second default kind: panic %v", r)
			}
		}()
		Register(Kind{Name: "c", Default: true})
	}()
	if k, err := Lookup("a"); err != nil || k.Name != "a" {
		t.Errorf("Lookup(a) = %+v, %v", k, err)
	}
	_, err := New("mariadb", t.TempDir(), "")
	if err == nil || err.Error() != `unknown server kind "mariadb" (known: a, b)` {
		t.Errorf("New of an unknown kind: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a kind twice did not panic")
		}
	}()
	Register(Kind{Name: "a"})
}

func TestClosest(t *testing.T) {
	known := []string{"shared_buffers", "work_mem", "maintenance_work_mem", "wal_buffers", "port"}
	for _, c := range []struct{ name, want string }{
		{"shared_bufers", "shared_buffers"},
		{"Shared_Buffer", "shared_buffers"},
		{"work_men", "work_mem"},
		{"maintenance_work_men", "maintenance_work_mem"},
		{"wal_bufers", "wal_buffers"},
		{"prt", "port"},
		{"pt", ""},
		{"jit_expressions", ""},
		{"effective_io_concurrency", ""},
	} {
		if got := Closest(c.name, known); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestHeadTail: a failing setup command's output keeps its first and its
// last lines, and says where lines were left out.
func TestHeadTail(t *testing.T) {
	out := "Installing system tables ...\n\nERROR: 6  Error on delete of '/tmp/#sql-1'\n" +
		"advice 1\nadvice 2\nadvice 3\nsee the bug tracker\n"
	cases := []struct {
		head, tail int
		want       string
	}{
		{2, 1, "Installing system tables ...; ERROR: 6  Error on delete of '/tmp/#sql-1'; ...; see the bug tracker"},
		{0, 2, "advice 3; see the bug tracker"},
		{4, 4, "Installing system tables ...; ERROR: 6  Error on delete of '/tmp/#sql-1'; advice 1; advice 2; advice 3; see the bug tracker"},
	}
	for _, c := range cases {
		if got := HeadTail(out, c.head, c.tail); got != c.want {
			t.Errorf("HeadTail(%d, %d) = %q, want %q", c.head, c.tail, got, c.want)
		}
	}
}

// TestTopologyNodes: a cluster whose nodes all take writes takes none of
// the flags about replicas, each refused in a line of its own, and only
// a kind whose clusters have that shape makes one; a kind of the other
// shape refuses --nodes, and a multi-master kind --replicas.
func TestTopologyNodes(t *testing.T) {
	for _, c := range []struct {
		t    Topology
		want string
	}{
		{Topology{Nodes: 3}, ""},
		{Topology{Nodes: 1}, ""},
		{Topology{Nodes: -1}, "--nodes -1: want 1 or more"},
		{Topology{Nodes: 3, Replicas: 2}, "--nodes and --replicas are two shapes of cluster"},
		{Topology{Nodes: 3, SyncReplicas: 1}, "--sync-replicas is for a primary and its replicas"},
		{Topology{Nodes: 3, ReplicaDelay: time.Millisecond}, "--replica-delay is for"},
		{Topology{Nodes: 3, TTL: time.Second}, "--ttl is for"},
		{Topology{Nodes: 3, LoopWait: time.Second}, "--loop-wait is for"},
	} {
		err := c.t.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.t, err, c.want)
		}
	}
	if got := (Topology{Nodes: 3}).String(); got != "a cluster of 3 nodes, every one taking writes" {
		t.Errorf("String() = %q", got)
	}
	newCluster := func(string, string, Topology) Cluster { return nil }
	Register(Kind{Name: "pp", NewCluster: newCluster})
	Register(Kind{Name: "mm", NewCluster: newCluster, MultiMaster: true})
	t.Cleanup(func() { kinds = map[string]Kind{} })
	for _, c := range []struct {
		kind string
		t    Topology
		want string
	}{
		{"mm", Topology{Nodes: 3}, ""},
		{"pp", Topology{Replicas: 2}, ""},
		{"pp", Topology{Nodes: 3}, "--nodes N makes a multi-master cluster, which pp has not: give --replicas N for a primary and its replicas"},
		{"mm", Topology{Replicas: 2}, "--replicas N makes a primary and its replicas, and a mm cluster's nodes all take writes: give --nodes N"},
	} {
		err := CheckCluster(c.kind, c.t)
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("%s %+v: %v, want %q", c.kind, c.t, err, c.want)
		}
	}
}
