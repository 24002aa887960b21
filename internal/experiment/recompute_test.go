package experiment_test

import (
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/experiment"
	"github.com/dbrig/dbrig/internal/result"
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
	key := doc.PrimaryMetric
	if key == "" || len(doc.Metrics) < 2 {
		t.Fatalf("sweep declares metrics %+v, primary %q", doc.Metrics, key)
	}
	// The primary metric grows with the cache (point index / 2) and with the VUs.
	for i := range doc.Points {
		base := 1000 * float64(1+i/2) * float64(1+i%2)
		doc.Points[i].Values[key] = []float64{base - 10, base, base + 10}
		doc.Points[i].P95 = []float64{1, 2, 3}
	}
	result.Recompute(doc)
	for i, p := range doc.Points {
		if st := p.Stats[key]; st == nil || st.N != 3 {
			t.Fatalf("point %d stats %+v", i+1, p.Stats)
		}
		g := p.Gains[key]
		if i < 2 {
			if g != nil || p.BaselinePoint != -1 {
				t.Errorf("baseline point %d has gain %+v, baseline_point %d", i+1, g, p.BaselinePoint)
			}
			continue
		}
		want := float64(i/2) * 100 // vs the same VU level at 128MB
		if p.BaselinePoint != i%2 || g == nil || abs(g.Pct-want) > 1e-9 || !g.Significant {
			t.Errorf("point %d: baseline_point %d, gain %+v; want %d, +%.0f%%, significant", i+1, p.BaselinePoint, g, i%2, want)
		}
		if _, other := p.Gains["tpm"]; other {
			t.Errorf("point %d has a gain for a metric with no values", i+1)
		}
	}
	if len(doc.Notes) != 0 {
		t.Errorf("notes %q with three repetitions", doc.Notes)
	}

	one := mustParse(t, strings.Replace(good, "repeat: 3", "repeat: 1", 1))
	doc = experiment.New(one, t.TempDir()).Doc
	for i := range doc.Points {
		doc.Points[i].Values[key] = []float64{float64(100 + i)}
	}
	result.Recompute(doc)
	if g := doc.Points[2].Gains[key]; g == nil || g.Significant || g.Low != g.Pct || g.High != g.Pct {
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
