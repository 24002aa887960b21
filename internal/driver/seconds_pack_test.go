package driver

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbrig/dbrig/internal/latency"
)

// TestSecondsPacked: a second packed behind the latest still takes a late
// hand-over and reads whole; only the last few seconds stay unpacked.
func TestSecondsPacked(t *testing.T) {
	var s seconds
	one := func(d time.Duration) *hdrhistogram.Histogram {
		h := latency.NewSecondHistogram()
		latency.Record(h, d)
		return h
	}
	for i := range 20 {
		s.add(i, one(time.Duration(i+1)*time.Millisecond))
	}
	s.add(0, one(9*time.Millisecond)) // late, long after second 0 was packed
	unpacked := 0
	for i := range s.h {
		if s.h[i] != nil {
			unpacked++
		}
	}
	if unpacked > packAfter+1 {
		t.Errorf("%d seconds unpacked, want at most %d", unpacked, packAfter+1)
	}
	if h := s.hist(0); h == nil || h.TotalCount() != 2 || h.Max() < 8900 {
		t.Errorf("second 0 after a late hand-over: %v", h)
	}
	if p := percentiles(s.ending(10)); p == nil || p.P50 < 9.9 || p.P50 > 10.1 {
		t.Errorf("second 9's percentiles %+v, want 10 ms", p)
	}
}
