package latency

import (
	"testing"
	"time"
)

func TestSummarizeAndRoundTrip(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		Record(h, time.Duration(i)*time.Millisecond)
	}
	Record(h, 2*time.Hour) // clamped, still counted
	s := Summarize(h)
	if s.P50 < 495 || s.P50 > 505 {
		t.Errorf("p50 = %v ms, want about 500", s.P50)
	}
	if s.P99 < 985 || s.P99 > 1001 {
		t.Errorf("p99 = %v ms, want about 990", s.P99)
	}
	if h.TotalCount() != 1001 {
		t.Errorf("count = %d, want 1001", h.TotalCount())
	}
	enc, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if back.TotalCount() != h.TotalCount() || Summarize(back) != s {
		t.Errorf("round trip changed the histogram: %+v vs %+v", Summarize(back), s)
	}
	if (Summarize(NewHistogram()) != Latency{}) {
		t.Error("empty histogram should summarize to zeros")
	}
}
