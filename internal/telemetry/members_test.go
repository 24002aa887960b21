package telemetry

import (
	"math"
	"testing"
)

func TestMemberSummary(t *testing.T) {
	c := func(paused, cert, sendQ, commits float64) map[string]float64 {
		return map[string]float64{MemberPausedNS: paused, MemberCertFailures: cert, MemberSendQueue: sendQ, MemberCommits: commits, MemberSize: 3}
	}
	r := &Recording{Window: [2]float64{10, 20}, DB: &DBRecord{}}
	r.DB.addMembers(5, []Member{{Name: "b", Counters: c(0, 0, 9, 0)}, {Name: "a", Counters: c(0, 0, 9, 0)}})
	r.DB.addMembers(10, []Member{{Name: "b", Counters: c(1e9, 10, 2, 100)}, {Name: "a", Counters: c(0, 0, 0, 50)}})
	r.DB.addMembers(15, []Member{{Name: "b", Counters: c(2e9, 20, 4, 600)}})
	r.DB.addMembers(20, []Member{{Name: "b", Counters: c(3.5e9, 30, 6, 1100)}, {Name: "a", Counters: c(0, 5, 0, 150)}})
	r.DB.addMembers(25, []Member{{Name: "b", Counters: c(9e9, 99, 99, 9999)}})
	ms := r.memberSummary()
	if len(ms) != 2 || ms[0].Name != "a" || ms[1].Name != "b" {
		t.Fatalf("members %+v, want a and b, by name", ms)
	}
	a, b := ms[0], ms[1]
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	// b over the window's 10 s: paused 2.5 s, 20 failures, 1,000 commits;
	// its queue read 2, 4 and 6 at the edges and inside.
	near("b paused %", b.Paused, 25)
	near("b cert failures/s", b.CertFailures, 2)
	near("b commits/s", b.Commits, 100)
	near("b send queue mean", b.SendQueue.Mean, 4)
	near("b send queue max", b.SendQueue.Max, 6)
	if b.Readings != 3 || b.Seconds != 10 {
		t.Errorf("b: %d readings over %v s, want 3 over 10", b.Readings, b.Seconds)
	}
	// a missed a reading inside the window: its rates span what it answered.
	near("a commits/s", a.Commits, 10)
	near("a cert failures/s", a.CertFailures, 0.5)
	near("a paused", a.Paused, 0)
}
