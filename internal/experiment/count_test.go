package experiment

import (
	"testing"

	"github.com/dbrig/dbrig/internal/result"
)

// TestCountTakesTheHeadline: a sweep's point counts each run's metric as
// the run's headline does: the client's figure where the run chose it
// over a database's that other clients inflated (issue 35), the
// database's where the two agreed.
func TestCountTakesTheHeadline(t *testing.T) {
	db, client, tpm := 77689.0, 38732.0, 86000.0
	d := &result.Document{Metrics: []result.Metric{
		{MetricDef: result.MetricDef{Key: "nopm"}, DB: &db, Client: &client, Headline: result.SideClient},
		{MetricDef: result.MetricDef{Key: "tpm"}, DB: &tpm, Client: &client, Headline: result.SideDB},
	}}
	pt := &result.SweepPoint{Values: map[string][]float64{}}
	count(pt, d)
	if v := pt.Values["nopm"]; len(v) != 1 || v[0] != client {
		t.Errorf("the point's nopm %v, want the client's %v that stood for the run, not the database's %v", v, client, db)
	}
	if v := pt.Values["tpm"]; len(v) != 1 || v[0] != tpm {
		t.Errorf("the point's tpm %v, want the database's %v", v, tpm)
	}
}
