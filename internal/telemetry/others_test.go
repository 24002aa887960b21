package telemetry

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// othersSource is a Source whose Others gives each call's list in turn,
// or err.
type othersSource struct {
	Source
	calls [][]Session
	err   error
}

func (s *othersSource) Others(context.Context) ([]Session, error) {
	if s.err != nil {
		return nil, s.err
	}
	out := s.calls[0]
	s.calls = s.calls[1:]
	return out, nil
}

// TestOthersInTheWindow: the other clients' sessions are those the edges
// read and those the sampler saw inside the window, each counted once by
// its ID, and counted by client; the run's own sessions, and what the
// sampler saw outside the window, are not.
func TestOthersInTheWindow(t *testing.T) {
	other := func(id, client string) Session {
		return Session{Class: "CPU", Event: "CPU", Other: true, ID: id, Client: client}
	}
	own := Session{Class: "CPU", Event: "CPU", ID: "own"}
	src := &othersSource{calls: [][]Session{
		{other("1", "pgbench")},                     // the start edge
		{other("1", "pgbench"), other("4", "psql")}, // the end edge: 4 ran between the sampler's looks
	}}
	r := &Recorder{src: src, rec: Recording{DB: &DBRecord{Sessions: &SessionHistory{}}, Unavailable: map[string]string{}}}
	r.count([]Session{own, other("9", "before the window")})
	r.readOthers(context.Background())
	r.hasEdge[0] = true
	r.count([]Session{own, other("1", "pgbench"), other("2", "dbrig 3f9a2c1b"), other("3", "dbrig 3f9a2c1b")})
	r.count([]Session{other("2", "dbrig 3f9a2c1b")})
	r.hasEdge[1] = true
	r.count([]Session{other("8", "after the window")})
	r.readOthers(context.Background())
	got := r.othersSeen()
	want := map[string]int{"pgbench": 1, "psql": 1, "dbrig 3f9a2c1b": 2}
	if got == nil || got.Sessions != 4 || fmt.Sprint(got.Clients) != fmt.Sprint(want) {
		t.Errorf("others %+v, want 4 sessions, by client %v", got, want)
	}
	// The load profile counts them all, the run's and the others'.
	if n := r.bucket.Counts["CPU/CPU"]; n != 8 {
		t.Errorf("the sampled bucket counts %d sessions on CPU, want all 8", n)
	}
}

// TestOthersUnread: a source that cannot tell the run's sessions from
// others' gives no figure, and says why.
func TestOthersUnread(t *testing.T) {
	src := &othersSource{err: errors.New("an embedded database keeps no list")}
	r := &Recorder{src: src, rec: Recording{Unavailable: map[string]string{}}}
	r.readOthers(context.Background())
	r.hasEdge[0] = true
	r.readOthers(context.Background())
	if got := r.othersSeen(); got != nil {
		t.Errorf("others %+v, want none read", got)
	}
	if why := r.rec.Unavailable[OtherSessions]; why != "an embedded database keeps no list" {
		t.Errorf("why the other sessions were not read: %q", why)
	}
}
