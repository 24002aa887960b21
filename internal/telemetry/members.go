package telemetry

import (
	"cmp"
	"context"
	"slices"
)

// Members: the nodes of a cluster whose nodes all take writes (a
// multi-master cluster), each read on its own with the counters every
// interval: how long the cluster paused its writes for a node that fell
// behind (flow control), how many of a node's transactions lost at
// certification, its queues, and its own clients' commits, so that a run
// can say which node held the others back and what the conflicts cost.

// MemberSource is a Source whose server is a cluster of nodes that all
// take writes. Members reads every node that answers; a node that does
// not is missing from the reading, a gap in its series.
type MemberSource interface {
	Members(ctx context.Context) ([]Member, error)
}

// Member is one node's reading: its name and its counters, by the
// Member* keys (a counter cumulative, a gauge as it stood).
type Member struct {
	Name     string
	Counters map[string]float64
}

// Member counter keys.
const (
	// MemberPausedNS is the time the node was paused by flow control, in
	// nanoseconds, cumulative: while any node is paused the cluster
	// takes no writes.
	MemberPausedNS = "flow_control_paused_ns"
	// MemberFlowSent counts the pauses the node asked for, its receive
	// queue too long: the node that holds the others back.
	MemberFlowSent = "flow_control_sent"
	// MemberCertFailures counts the node's own transactions that failed
	// certification against another node's, MemberBFAborts those it
	// aborted to apply another node's write set first.
	MemberCertFailures = "cert_failures"
	MemberBFAborts     = "bf_aborts"
	// MemberSendQueue and MemberRecvQueue are the write sets waiting to
	// leave the node and to be applied on it (gauges).
	MemberSendQueue = "send_queue"
	MemberRecvQueue = "recv_queue"
	// MemberReplicatedBytes and MemberReceivedBytes are the write sets'
	// bytes the node sent and received.
	MemberReplicatedBytes = "replicated_bytes"
	MemberReceivedBytes   = "received_bytes"
	// MemberCommits counts the node's own clients' commits.
	MemberCommits = "commits"
	// MemberSize is the cluster's size as the node sees it (a gauge).
	MemberSize = "cluster_size"
)

// MemberSeries is one node's readings over the run.
type MemberSeries struct {
	Name    string         `json:"name"`
	Samples []MemberSample `json:"samples"`
}

// MemberSample is one reading of a node, at T.
type MemberSample struct {
	T        float64            `json:"t"`
	Counters map[string]float64 `json:"counters"`
}

// membersKey is what Recording.Unavailable names a failed read of the
// members under.
const membersKey = "members"

// addMembers files one reading of the members, taken at t, under each
// one's series. Called under the recorder's mu.
func (db *DBRecord) addMembers(t float64, ms []Member) {
	for _, m := range ms {
		i := slices.IndexFunc(db.Members, func(s MemberSeries) bool { return s.Name == m.Name })
		if i < 0 {
			i = len(db.Members)
			db.Members = append(db.Members, MemberSeries{Name: m.Name})
		}
		db.Members[i].Samples = append(db.Members[i].Samples, MemberSample{T: t, Counters: m.Counters})
	}
}

// MemberSummary is one node over the measured window: the counters as
// rates per second over the readings it answered (Paused as a share of
// that time, in percent), the queues and the size as levels.
type MemberSummary struct {
	Name string
	// Readings counts the window's readings of it; Seconds is the time
	// between its first and its last.
	Readings int
	Seconds  float64
	// Paused is the share (%) of the time that flow control paused the
	// node's writes.
	Paused                                  float64
	FlowSent, CertFailures, BFAborts        float64
	ReplicatedBytes, ReceivedBytes, Commits float64
	SendQueue, RecvQueue, Size              Level
}

// memberSummary is each node read in the window, by name.
func (r *Recording) memberSummary() []MemberSummary {
	var out []MemberSummary
	for _, series := range r.DB.Members {
		ms := MemberSummary{Name: series.Name}
		var first, last *MemberSample
		for i := range series.Samples {
			s := &series.Samples[i]
			if !r.InWindow(s.T) && s.T != r.Window[0] {
				continue
			}
			if first == nil {
				first = s
			}
			last = s
			ms.Readings++
			ms.SendQueue.add(gauge(s, MemberSendQueue))
			ms.RecvQueue.add(gauge(s, MemberRecvQueue))
			ms.Size.add(gauge(s, MemberSize))
		}
		if first == nil || last == first {
			continue
		}
		ms.Seconds = last.T - first.T
		rate := func(key string) float64 {
			a, okA := first.Counters[key]
			b, okB := last.Counters[key]
			if !okA || !okB || b < a {
				return 0
			}
			return (b - a) / ms.Seconds
		}
		ms.Paused = rate(MemberPausedNS) / 1e9 * 100
		ms.FlowSent, ms.CertFailures, ms.BFAborts = rate(MemberFlowSent), rate(MemberCertFailures), rate(MemberBFAborts)
		ms.ReplicatedBytes, ms.ReceivedBytes, ms.Commits = rate(MemberReplicatedBytes), rate(MemberReceivedBytes), rate(MemberCommits)
		out = append(out, ms)
	}
	slices.SortFunc(out, func(a, b MemberSummary) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// gauge is a reading's gauge key, where it has it.
func gauge(s *MemberSample, key string) (float64, bool) {
	v, ok := s.Counters[key]
	return v, ok
}
