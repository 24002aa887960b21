package experiment_test

import (
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/experiment"
)

// TestGainRecompute: the sweep document's gains compare each point with
// the baseline at its own VU level.
func TestGainRecompute(t *testing.T) {
	s := mustParse(t, good)
	sw := experiment.New(s, t.TempDir())
	doc := sw.Doc
	if len(doc.Points) != 8 || len(doc.Order) != 24 || doc.Repeat != 3 {
		t.Fatalf("%d points, %d runs", len(doc.Points), len(doc.Order))
	}
	// NOPM grows with the cache (point index / 2) and with the VUs.
	for i := range doc.Points {
		base := 1000 * float64(1+i/2) * float64(1+i%2)
		doc.Points[i].NOPM = []float64{base - 10, base, base + 10}
		doc.Points[i].P95 = []float64{1, 2, 3}
	}
	experiment.Recompute(doc)
	for i, p := range doc.Points {
		if p.Stats == nil || p.Stats.N != 3 {
			t.Fatalf("point %d stats %+v", i+1, p.Stats)
		}
		if i < 2 {
			if p.Gain != nil || p.BaselinePoint != -1 {
				t.Errorf("baseline point %d has gain %+v, baseline_point %d", i+1, p.Gain, p.BaselinePoint)
			}
			continue
		}
		want := float64(i/2) * 100 // vs the same VU level at 128MB
		if p.BaselinePoint != i%2 || p.Gain == nil || abs(p.Gain.Pct-want) > 1e-9 || !p.Gain.Significant {
			t.Errorf("point %d: baseline_point %d, gain %+v; want %d, +%.0f%%, significant", i+1, p.BaselinePoint, p.Gain, i%2, want)
		}
	}
	if len(doc.Notes) != 0 {
		t.Errorf("notes %q with three repetitions", doc.Notes)
	}

	one := mustParse(t, strings.Replace(good, "repeat: 3", "repeat: 1", 1))
	doc = experiment.New(one, t.TempDir()).Doc
	for i := range doc.Points {
		doc.Points[i].NOPM = []float64{float64(100 + i)}
	}
	experiment.Recompute(doc)
	if g := doc.Points[2].Gain; g == nil || g.Significant || g.Low != g.Pct || g.High != g.Pct {
		t.Errorf("single-repetition gain %+v, want no interval, not significant", g)
	}
	if len(doc.Notes) != 1 || !strings.Contains(doc.Notes[0], "single repetition") {
		t.Errorf("notes %q, want one about the single repetition", doc.Notes)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
