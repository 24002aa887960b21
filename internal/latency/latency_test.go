package latency

import (
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
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

// A histogram of more significant digits than dbrig records is refused
// from its header, before its counts are allocated; dbrig's own, of 2 and
// 3 digits, decode.
func TestDecodeDigits(t *testing.T) {
	wide, err := Encode(hdrhistogram.New(1, 1000, 5))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(wide); err == nil || !strings.Contains(err.Error(), "5 significant digits") {
		t.Errorf("Decode of 5 digits: error %v, want it refused", err)
	}
	for _, h := range []*hdrhistogram.Histogram{NewHistogram(), NewSecondHistogram()} {
		Record(h, time.Millisecond)
		enc, err := Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := Decode(enc); err != nil || back.TotalCount() != 1 {
			t.Errorf("Decode of dbrig's own %d digits: %v", h.SignificantFigures(), err)
		}
	}
	for _, bad := range []string{"", "!!", "AAAA", "HISTFAAAAAA="} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%q) = nil error", bad)
		}
	}
}
