package server

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// Topology is the shape of a managed server of several nodes: a primary
// and the replicas that stream its changes, kept by dbrig itself or by
// the HA manager its users run; or nodes that all take writes, each
// certifying its transactions against the others' (a multi-master
// cluster). The zero Topology is one server.
type Topology struct {
	// Replicas are the nodes beside the primary.
	Replicas int `json:"replicas"`
	// Nodes are the nodes of a multi-master cluster, every one a peer of
	// the others; one node is a cluster too, for a study of what the
	// others cost. It excludes Replicas and the flags about replicas.
	Nodes int `json:"nodes,omitempty"`
	// SyncReplicas is how many of them a commit waits for; 0 commits
	// without waiting for any (asynchronous replication).
	SyncReplicas int `json:"sync_replicas,omitempty"`
	// HA names the HA manager that keeps the cluster and promotes a
	// replica when the primary is lost; "" is dbrig itself, which
	// promotes only when told (dbrig server failover, a run's
	// --failover-at).
	HA string `json:"ha,omitempty"`
	// ReplicaDelay is added to every packet reaching a replica, so to
	// every round trip with it: each replica is in a network namespace of
	// its own, as in another zone.
	ReplicaDelay time.Duration `json:"replica_delay,omitempty"`
	// TTL and LoopWait are the HA manager's (Patroni's ttl and
	// loop_wait): how long a primary's lease lasts without renewal, and
	// how often each node looks; zero takes the kind's defaults.
	TTL      time.Duration `json:"ttl,omitempty"`
	LoopWait time.Duration `json:"loop_wait,omitempty"`
}

// IsZero says t is one server.
func (t Topology) IsZero() bool { return t == Topology{} }

// Check refuses, in one line, a topology that cannot be.
func (t Topology) Check() error {
	if t.Nodes != 0 {
		return t.checkNodes()
	}
	switch {
	case t.Replicas < 0:
		return exitcode.Userf("--replicas %d: want 1 or more", t.Replicas)
	case t.Replicas == 0 && !t.IsZero():
		return exitcode.Userf("--sync-replicas, --ha, --replica-delay, --ttl and --loop-wait are for a cluster: give --replicas N")
	case t.SyncReplicas < 0 || t.SyncReplicas > t.Replicas:
		return exitcode.Userf("--sync-replicas %d: want from 0 to the %d replicas", t.SyncReplicas, t.Replicas)
	case t.ReplicaDelay < 0:
		return exitcode.Userf("--replica-delay %s: want 0 or more", t.ReplicaDelay)
	case t.TTL < 0 || t.LoopWait < 0:
		return exitcode.Userf("--ttl and --loop-wait want a positive duration")
	case t.HA == "" && (t.TTL > 0 || t.LoopWait > 0):
		return exitcode.Userf("--ttl and --loop-wait are the HA manager's: give --ha too")
	}
	return nil
}

// checkNodes refuses what a multi-master cluster cannot take: every flag
// about a primary's replicas, each in a line of its own.
func (t Topology) checkNodes() error {
	const refused = "%s is for a primary and its replicas (--replicas N), and --nodes makes a cluster whose nodes all take writes: leave it out"
	switch {
	case t.Nodes < 0:
		return exitcode.Userf("--nodes %d: want 1 or more", t.Nodes)
	case t.Replicas != 0:
		return exitcode.Userf("--nodes and --replicas are two shapes of cluster: give --nodes N for nodes that all take writes, or --replicas N for a primary and its replicas")
	case t.SyncReplicas != 0:
		return exitcode.Userf(refused, "--sync-replicas")
	case t.HA != "":
		return exitcode.Userf(refused, "--ha")
	case t.ReplicaDelay != 0:
		return exitcode.Userf(refused, "--replica-delay")
	case t.TTL != 0:
		return exitcode.Userf(refused, "--ttl")
	case t.LoopWait != 0:
		return exitcode.Userf(refused, "--loop-wait")
	}
	return nil
}

// String is the topology as a person says it: "a primary and 2 replicas
// (1 synchronous), kept by patroni, 5ms away".
func (t Topology) String() string {
	switch {
	case t.Nodes == 1:
		return "a cluster of 1 node, taking writes"
	case t.Nodes > 1:
		return fmt.Sprintf("a cluster of %d nodes, every one taking writes", t.Nodes)
	case t.Replicas == 0:
		return "one server"
	}
	s := fmt.Sprintf("a primary and %d %s", t.Replicas, plural(t.Replicas, "replica", "replicas"))
	switch {
	case t.SyncReplicas == 0:
		s += " (asynchronous)"
	case t.SyncReplicas == t.Replicas:
		s += " (synchronous)"
	default:
		s += fmt.Sprintf(" (%d synchronous)", t.SyncReplicas)
	}
	if t.HA != "" {
		s += ", kept by " + t.HA
		if t.TTL > 0 {
			s += fmt.Sprintf(" (ttl %s", t.TTL)
			if t.LoopWait > 0 {
				s += fmt.Sprintf(", loop_wait %s", t.LoopWait)
			}
			s += ")"
		} else if t.LoopWait > 0 {
			s += fmt.Sprintf(" (loop_wait %s)", t.LoopWait)
		}
	}
	if t.ReplicaDelay > 0 {
		s += fmt.Sprintf(", each replica %s away", t.ReplicaDelay)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Cluster is a managed server of several nodes. As a Server it is the
// whole: Start starts every node, Stop stops them all, Status is the
// primary's with the URL that follows whichever node is primary, and
// CreateDB and URLFor go to the primary. A multi-master cluster has no
// primary: its Status is a running node's, its URL names every node, and
// Failover and Switchover refuse in one line.
type Cluster interface {
	Server
	// Topology is the shape the cluster was made with.
	Topology() Topology
	// Nodes reports every node as another process would see it.
	Nodes(ctx context.Context) ([]Node, error)
	// Failover loses the primary as a lost machine would, and returns
	// once another node is primary, with that node; note tells what is
	// happening as it happens.
	Failover(ctx context.Context, note func(string)) (Node, error)
	// Switchover hands the primary's role to another node, planned, and
	// returns once that node is primary.
	Switchover(ctx context.Context, note func(string)) (Node, error)
}

// Rejoiner is a cluster that can start again, while the others run, the
// nodes it lost (NodeKiller), each catching up with them.
type Rejoiner interface {
	// Rejoin starts every lost node and names those it started.
	Rejoin(ctx context.Context) ([]string, error)
}

// NodeKiller is a cluster that can lose one node while the others go
// on, as the loss of that node's machine would.
type NodeKiller interface {
	// KillNode ends the node named name (as Nodes names them) with
	// SIGKILL, and returns it as it is after: down. The cluster records
	// it as lost, and its next Start brings it back, taking what it
	// missed from the others.
	KillNode(ctx context.Context, name string) (Node, error)
}

// Progresser is a server whose start takes a while and can say what it
// is doing meanwhile (a cluster making and starting its nodes).
type Progresser interface {
	// SetProgress has the server tell say what it does, a line at a time.
	SetProgress(say func(string))
}

// Say is what a Progresser was given to say its lines with; nil says
// nothing.
type Say func(string)

// Tell says one line, if anyone asked.
func (say Say) Tell(format string, args ...any) {
	if say != nil {
		say(fmt.Sprintf(format, args...))
	}
}

// Node roles.
const (
	RolePrimary = "primary"
	RoleReplica = "replica"
	// RoleMember is a running node of a multi-master cluster, which takes
	// writes as every other does.
	RoleMember = "member"
	// RoleDown is a node that does not run: stopped, or lost.
	RoleDown = "down"
)

// Node is one node of a cluster.
type Node struct {
	Name string
	Role string
	// Sync is how the primary waits for a replica's commits: "sync",
	// "quorum", "potential" or "async"; "" for the primary and a node
	// that does not stream.
	Sync string
	// State is what the node is doing ("streaming", "running", "lost",
	// "stopped"), in the words of whoever keeps it.
	State string
	// Addr is where the node listens (host:port), and URL reaches its
	// administrative database there.
	Addr, URL string
	PID       int
	Timeline  int
	// LSN is where the node's log is: the primary's written end, a
	// replica's replayed one, as the database writes positions.
	LSN string
	// Lag is how far a replica's replay is behind the primary, in bytes
	// and in time; -1 bytes where it cannot be told.
	LagBytes int64
	Lag      time.Duration
	// Delay is what the node's link adds to every packet it sends.
	Delay time.Duration
	// ClusterStatus, ClusterSize and Ready are a multi-master node's view
	// of its cluster: whether the nodes it sees make the cluster's
	// primary component ("Primary") or a part cut off from it
	// ("non-Primary"), how many they are, and whether it takes queries
	// (MariaDB Galera's wsrep_cluster_status, wsrep_cluster_size and
	// wsrep_ready).
	ClusterStatus string
	ClusterSize   int
	Ready         bool
	// Note says anything else: why it is down.
	Note string
}

// ReadStatus fills n from the status of its server s: its pid, and
// "running", where it runs; else "crashed", with why, where it crashed
// and was not lost on purpose. It reports whether the node runs.
func (n *Node) ReadStatus(ctx context.Context, s Server, lost bool) bool {
	st, err := s.Status(ctx)
	if err != nil || st.State != Running {
		if err == nil && st.State == Crashed && !lost {
			n.State, n.Note = "crashed", st.Reason
		}
		return false
	}
	n.PID, n.State = st.PID, "running"
	return true
}
