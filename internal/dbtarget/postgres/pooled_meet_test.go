package postgres

import (
	"context"
	"testing"
)

// TestMeeting: the flushes of the open sessions meet and go on together;
// a session closed meanwhile completes a meeting that waited for it, and
// one that never comes holds the rest no longer than meetWait, and for
// meetWait after such a meeting a flush meets no other.
func TestMeeting(t *testing.T) {
	ctx := context.Background()
	var m meeting
	m.open(3)
	done := make(chan int, 3)
	for i := range 2 {
		go func() { m.meet(ctx); done <- i }()
	}
	m.open(-1)
	<-done
	<-done
	m.mu.Lock()
	if m.met != nil || m.here != 0 || m.live != 2 {
		t.Fatalf("after a meeting: %d here of %d open, one in progress %v; want none in progress, 2 open", m.here, m.live, m.met != nil)
	}
	m.mu.Unlock()
	m.meet(ctx) // the other never comes: it returns after meetWait
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.met != nil || m.here != 0 || m.late.IsZero() {
		t.Errorf("after a late meeting: %d here, one in progress %v, late at %v; want none in progress, late now", m.here, m.met != nil, m.late)
	}
	m.mu.Unlock()
	// Done at once, it would leave a meeting begun, had it begun one.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	m.meet(gone)
	m.mu.Lock()
	if m.met != nil || m.here != 0 {
		t.Errorf("a flush right after a late meeting: %d here, one in progress %v; want it gone on alone", m.here, m.met != nil)
	}
}
