package telemetry

import (
	"cmp"
	"context"
	"slices"
)

// Replicas: where each replica of a primary stood, read with the
// counters every interval, so that a run on a replicated server shows
// how far behind its replicas fell, and how long its commits waited for
// them (WaitReplication).

// ReplicaSource is a Source whose server streams its log to replicas.
// Replicas reads, on the server the source follows (the primary, after a
// failover the new one), where each of its replicas is; none where it
// has none.
type ReplicaSource interface {
	Replicas(ctx context.Context) ([]Replica, error)
}

// Replica is one replica as a ReplicaSource reads it: its name (the one
// it gave the primary) and where it stood. The reading's time is the
// recorder's to set.
type Replica struct {
	Name string
	ReplicaSample
}

// ReplicaSeries is one replica's readings over the run, a gauge series
// like the host's memory: a reading missing (the primary could not be
// read, or the replica did not stream) is a gap in it.
type ReplicaSeries struct {
	Name    string          `json:"name"`
	Samples []ReplicaSample `json:"samples"`
}

// ReplicaSample is one reading of a replica, at T.
type ReplicaSample struct {
	T float64 `json:"t"`
	// State is what the replica was doing and SyncState how the primary
	// waited for it, both in the database's words ("streaming";
	// "sync", "quorum", "async"); Synchronous says that commits waited
	// for it, alone or as one of a quorum.
	State       string `json:"state,omitempty"`
	SyncState   string `json:"sync_state,omitempty"`
	Synchronous bool   `json:"synchronous,omitempty"`
	// Positions in the primary's log, in bytes from its start: how far
	// the primary had written it (Primary), and how far the replica had
	// been sent it, had written, flushed and replayed it; 0 where the
	// database did not say.
	Primary  uint64 `json:"primary,omitempty"`
	Sent     uint64 `json:"sent,omitempty"`
	Written  uint64 `json:"written,omitempty"`
	Flushed  uint64 `json:"flushed,omitempty"`
	Replayed uint64 `json:"replayed,omitempty"`
	// The lags in ms: how long the primary's latest log took to be
	// written, flushed and replayed on the replica, as the primary
	// measured them (the round trip included); nil where it had no
	// measure (a replica caught up on an idle primary).
	WriteLag  *float64 `json:"write_lag_ms,omitempty"`
	FlushLag  *float64 `json:"flush_lag_ms,omitempty"`
	ReplayLag *float64 `json:"replay_lag_ms,omitempty"`
}

// Behind is how many bytes of the primary's log the replica had yet to
// replay; false where either position is unknown.
func (s ReplicaSample) Behind() (float64, bool) {
	if s.Primary == 0 || s.Replayed == 0 {
		return 0, false
	}
	if s.Replayed >= s.Primary {
		return 0, true
	}
	return float64(s.Primary - s.Replayed), true
}

// replicasKey is what Recording.Unavailable names a failed read of the
// replicas under.
const replicasKey = "replicas"

// addReplicas files one reading of the replicas, taken at t, under each
// one's series. Called under the recorder's mu.
func (db *DBRecord) addReplicas(t float64, rs []Replica) {
	for _, r := range rs {
		i := slices.IndexFunc(db.Replicas, func(s ReplicaSeries) bool { return s.Name == r.Name })
		if i < 0 {
			i = len(db.Replicas)
			db.Replicas = append(db.Replicas, ReplicaSeries{Name: r.Name})
		}
		s := r.ReplicaSample
		s.T = t
		db.Replicas[i].Samples = append(db.Replicas[i].Samples, s)
	}
}

// ReplicaSummary is one replica over the measured window.
type ReplicaSummary struct {
	Name string
	// States and SyncStates are what it did and how the primary waited
	// for it in the window, each change in turn (a replica promoted, or
	// catching up after a failover: "quorum", "potential", "quorum");
	// Synchronous says that it held commits in any reading.
	States, SyncStates []string
	Synchronous        bool
	// Readings counts the window's readings of it.
	Readings int
	// Behind is in bytes (ReplicaSample.Behind), the lags in ms.
	Behind, WriteLag, FlushLag, ReplayLag Level
}

// Level is a gauge over the readings that had it: their mean and the
// highest; N counts them, 0 where none had it.
type Level struct {
	Mean, Max float64
	N         int
}

func (l *Level) add(v float64, ok bool) {
	if !ok {
		return
	}
	l.Mean = (l.Mean*float64(l.N) + v) / float64(l.N+1)
	l.Max = max(l.Max, v)
	l.N++
}

// lag is a lag's value, where the reading had one.
func lag(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// changed adds state to states where it is another than the last.
func changed(states []string, state string) []string {
	if state == "" || len(states) > 0 && states[len(states)-1] == state {
		return states
	}
	return append(states, state)
}

// replicaSummary is each replica read in the window, by name.
func (r *Recording) replicaSummary() []ReplicaSummary {
	var out []ReplicaSummary
	for _, series := range r.DB.Replicas {
		rs := ReplicaSummary{Name: series.Name}
		for _, s := range series.Samples {
			if !r.InWindow(s.T) {
				continue
			}
			rs.Readings++
			rs.States, rs.SyncStates = changed(rs.States, s.State), changed(rs.SyncStates, s.SyncState)
			rs.Synchronous = rs.Synchronous || s.Synchronous
			rs.Behind.add(s.Behind())
			rs.WriteLag.add(lag(s.WriteLag))
			rs.FlushLag.add(lag(s.FlushLag))
			rs.ReplayLag.add(lag(s.ReplayLag))
		}
		if rs.Readings > 0 {
			out = append(out, rs)
		}
	}
	slices.SortFunc(out, func(a, b ReplicaSummary) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
