//go:build unix

package main

import (
	"slices"
	"testing"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
)

// TestShapes: each point has a session per 100 terminals and a warehouse
// per 200, at least one of each, as issue 22's acceptance points do
// (2,000 on 20 over 10 warehouses, 10,000 on 100 over 50); flags given
// fix them for every point.
func TestShapes(t *testing.T) {
	o := options{terminals: []int{100, 2000, 10000}}
	want := []shape{{100, 1, 1}, {2000, 20, 10}, {10000, 100, 50}}
	for i, got := range o.shapes() {
		if got != want[i] {
			t.Errorf("point %d: %+v, want %+v", i, got, want[i])
		}
	}
	o = options{terminals: []int{100}, sessions: 2, warehouses: 1}
	if got := o.shapes()[0]; got != (shape{100, 2, 1}) {
		t.Errorf("--quick's point: %+v", got)
	}
	if _, err := harness.ParseCounts("1000,x"); err == nil {
		t.Error("ParseCounts took 1000,x")
	}
}

// TestWindow: the window's RSS and CPU come from the samples nearest its
// edges.
func TestWindow(t *testing.T) {
	t0 := time.Now()
	var samples []harness.ProcSample
	for i := range 10 {
		samples = append(samples, harness.ProcSample{At: t0.Add(time.Duration(i) * time.Second),
			RSS: int64(100 + i), CPU: time.Duration(i) * 100 * time.Millisecond})
	}
	var p Point
	p.window(samples, t0.Add(2100*time.Millisecond), t0.Add(7900*time.Millisecond))
	if want := []int64{102, 104, 105, 106, 108}; !slices.Equal(p.RSSWindow, want) {
		t.Errorf("RSS in the window %v, want %v", p.RSSWindow, want)
	}
	if p.WindowCores < 0.099 || p.WindowCores > 0.101 {
		t.Errorf("window cores %.3f, want 0.1", p.WindowCores)
	}
}
