package report

import (
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
)

func sweepOf(means []float64, p95 []float64) *result.Sweep {
	s := &result.Sweep{Varied: []string{"vus"}, PrimaryMetric: "r",
		Metrics: []result.MetricDef{{Key: "r", Label: "reads/s", HigherIsBetter: true}}}
	for i, m := range means {
		s.Points = append(s.Points, result.SweepPoint{
			Params: map[string]string{"vus": []string{"1", "2", "4", "8", "16"}[i]},
			Stats:  map[string]*result.Stats{"r": {Mean: m}}, P95: []float64{p95[i]}})
	}
	// The points come in the matrix's order, not the load's.
	s.Points[0], s.Points[2] = s.Points[2], s.Points[0]
	return s
}

func TestSweetSpot(t *testing.T) {
	n, i, ok := sweetSpot(sweepOf([]float64{100, 190, 300, 309, 250}, []float64{1, 1.1, 1.4, 2.8, 6}))
	// vus 4 was swapped to the front.
	if i != 0 {
		t.Errorf("the sweet spot is point %d, want 0", i)
	}
	if !ok || !strings.Contains(n, "vus 4,") || !strings.Contains(n, "+3.0%") || !strings.Contains(n, "+100%") {
		t.Errorf("got %q, %v; want vus 4, then +3.0%% for +100%% latency", n, ok)
	}
	n, _, ok = sweetSpot(sweepOf([]float64{100, 200, 400}, []float64{1, 1, 1}))
	if !ok || !strings.Contains(n, "vus 4,") || !strings.Contains(n, "beyond") {
		t.Errorf("got %q, %v; want the last point, and that the spot may lie beyond", n, ok)
	}
	s := sweepOf([]float64{100, 200, 400}, []float64{1, 1, 1})
	s.Varied = []string{"vus", "mode"}
	if _, _, ok := sweetSpot(s); ok {
		t.Errorf("a sweet spot in a sweep of two parameters")
	}
}

// The block-io sessions sweep measured here (PostgreSQL 15 confined to
// 384MB, a 1GB table): each step to 32 sessions added 13% or more physical
// reads, 64 added none for twice the latency.
func TestSweetSpotReport(t *testing.T) {
	page := render(t, "testdata/blockio-sweep/sweep.json")
	for _, want := range []string{"Sweet spot: vus 32, with 43,158 physical reads/s", `["vus=32","(sweet spot)"]`} {
		if !strings.Contains(page, want) {
			t.Errorf("the sweep's report lacks %q", want)
		}
	}
}
