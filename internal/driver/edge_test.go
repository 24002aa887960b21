package driver

import (
	"context"
	"testing"
)

// TestSleepZero: a zero sleep goes on while no edge is asked for, stops
// at one that is (reaching it, and going on once it is read), and ends
// the VU once stop closes, even with an edge asked for.
func TestSleepZero(t *testing.T) {
	ctx := context.Background()
	first, last := newEdge(1), newEdge(1)
	ve := &vuEdges{all: []*edge{first, last}}
	stop := make(chan struct{})
	if !ve.sleep(ctx, 0, stop) || ve.next != 0 {
		t.Fatalf("no edge asked for: stopped, or at edge %d; want on, at 0", ve.next)
	}
	close(first.asked)
	close(first.read)
	if !ve.sleep(ctx, 0, stop) || ve.next != 1 {
		t.Fatalf("the first edge asked for and read: want on, past it; at edge %d", ve.next)
	}
	select {
	case <-first.all:
	default:
		t.Error("the VU did not arrive at the first edge")
	}
	close(last.asked)
	close(stop)
	if ve.sleep(ctx, 0, stop) {
		t.Error("stop closed: the VU went on")
	}
}

// BenchmarkSleepZero is what a procs-mode VU pays twice per transaction
// with no pacing: looking for an edge asked for, or a stop.
func BenchmarkSleepZero(b *testing.B) {
	ve := &vuEdges{all: []*edge{newEdge(1)}}
	stop := make(chan struct{})
	ctx := context.Background()
	for b.Loop() {
		ve.sleep(ctx, 0, stop)
	}
}
