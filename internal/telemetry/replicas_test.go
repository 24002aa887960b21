package telemetry

import (
	"math"
	"slices"
	"testing"
)

// TestReplicaBehind: the bytes a replica has yet to replay are the
// primary's position less its replayed one, none past it, and unknown
// where either is.
func TestReplicaBehind(t *testing.T) {
	for _, c := range []struct {
		primary, replayed uint64
		want              float64
		ok                bool
	}{
		{0x4000178, 0x4000000, 0x178, true},
		{0x4000000, 0x4000000, 0, true},
		{0x4000000, 0x4000100, 0, true}, // read a moment apart: the replica's is newer
		{0, 0x4000000, 0, false},
		{0x4000000, 0, 0, false},
	} {
		got, ok := ReplicaSample{Primary: c.primary, Replayed: c.replayed}.Behind()
		if got != c.want || ok != c.ok {
			t.Errorf("Behind(%#x, %#x) = %v, %v; want %v, %v", c.primary, c.replayed, got, ok, c.want, c.ok)
		}
	}
}

// TestReplicaSummary: each replica read in the measured window is
// summed up over its readings there alone: the mean and highest of its
// lags and of the bytes it was behind, over the readings that had them,
// and its states as they changed; one that held commits in any reading
// held them. A replica that stopped streaming before
// the window (a primary promoted at a failover) is not in it, and the
// series move with the rest of the recording.
func TestReplicaSummary(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	const p = 0x10000000
	db := &DBRecord{}
	db.addReplicas(0.5, []Replica{{Name: "node2"}, {Name: "node3"}})
	db.addReplicas(1.0, []Replica{
		{"node2", ReplicaSample{State: "streaming", SyncState: "quorum", Synchronous: true, Primary: p, Replayed: p - 1000, FlushLag: ms(6), ReplayLag: ms(7)}},
		{"node3", ReplicaSample{State: "streaming", SyncState: "async", Primary: p, Replayed: p, FlushLag: ms(1)}},
	})
	db.addReplicas(2.0, []Replica{
		{"node2", ReplicaSample{State: "streaming", SyncState: "potential", Primary: p + 3000, Replayed: p, FlushLag: ms(8)}},
		{"node3", ReplicaSample{State: "catchup", SyncState: "async", FlushLag: ms(3)}},
	})
	db.addReplicas(3.0, []Replica{{Name: "node2"}}) // after the window
	rec := &Recording{Window: [2]float64{0.5, 2}, DB: db}
	s := Summarize(rec)
	if len(s.Replicas) != 2 {
		t.Fatalf("replicas %+v, want node2 and node3", s.Replicas)
	}
	n2, n3 := s.Replicas[0], s.Replicas[1]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if n2.Name != "node2" || n2.Readings != 2 || !n2.Synchronous || !slices.Equal(n2.SyncStates, []string{"quorum", "potential"}) ||
		!near(n2.Behind.Mean, 2000) || n2.Behind.Max != 3000 || !near(n2.FlushLag.Mean, 7) || n2.FlushLag.Max != 8 ||
		n2.ReplayLag.N != 1 || n2.WriteLag.N != 0 {
		t.Errorf("node2: %+v", n2)
	}
	if n3.Name != "node3" || !slices.Equal(n3.States, []string{"streaming", "catchup"}) || n3.Synchronous || n3.Behind.N != 1 || n3.Behind.Max != 0 || !near(n3.FlushLag.Mean, 2) {
		t.Errorf("node3: %+v", n3)
	}
	rec.Window = [2]float64{2.5, 4}
	if s := Summarize(rec); len(s.Replicas) != 1 || s.Replicas[0].Name != "node2" {
		t.Errorf("a later window: replicas %+v, want node2 alone", s.Replicas)
	}
	rec.Shift(0.5)
	if got := rec.DB.Replicas[1].Samples[2].T; got != 1.5 {
		t.Errorf("shifted by 0.5 s, node3's last reading is at %v, want 1.5", got)
	}
}
