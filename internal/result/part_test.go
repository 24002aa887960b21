package result

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/latency"
)

// A part's document carries its part section, every second's histograms
// (which decode to what the driver recorded) and the note that its
// figures are a share.
func TestFromRunPart(t *testing.T) {
	run := sampleRun()
	h, w := latency.NewSecondHistogram(), latency.NewSecondHistogram()
	for i := 1; i <= 5; i++ {
		latency.Record(h, time.Duration(i)*time.Millisecond)
		latency.Record(w, time.Duration(i)*time.Microsecond)
	}
	run.Result.Series[0].Hist, run.Result.Series[0].WaitHist = h, w
	run.Part = &Part{Index: 2, Of: 3, RunID: "7f3c1a2b-0000-4000-8000-000000000000", VUs: 2}
	d, err := FromRun(run)
	if err != nil {
		t.Fatal(err)
	}
	if d.Part == nil || !reflect.DeepEqual(*d.Part, *run.Part) || d.Part == run.Part {
		t.Fatalf("part = %+v, want a copy of %+v", d.Part, run.Part)
	}
	for _, enc := range []string{d.Series[0].Histogram, d.Series[0].WaitHistogram} {
		back, err := latency.Decode(enc)
		if err != nil || back.TotalCount() != 5 {
			t.Errorf("second's histogram %q decodes to %v (%v), want 5 values", enc, back, err)
		}
	}
	want := "Part 2 of 3 of run 7f3c1a2b…: its figures are this part's share; dbrig merge makes the run's"
	if n := d.Notes; len(n) != 1 || n[0] != want {
		t.Errorf("notes = %q, want %q", n, want)
	}
	whole, _ := FromRun(sampleRun())
	if whole.Part != nil || whole.Series[0].Histogram != "" || len(whole.Notes) != 0 {
		t.Errorf("a whole run's document has part %v, histogram %q, notes %q", whole.Part, whole.Series[0].Histogram, whole.Notes)
	}
}

func TestDefaultPartPath(t *testing.T) {
	at := time.Date(2026, 11, 25, 18, 31, 2, 0, time.UTC)
	if p := DefaultPartPath("res", "tproc-c", at, 2, 3); !strings.HasSuffix(p, "res/tproc-c-20261125T183102Z-part2of3.json") {
		t.Errorf("path = %s", p)
	}
}
