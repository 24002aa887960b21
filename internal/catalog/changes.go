package catalog

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/changepoint"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// Trend is a metric's history over the entries a filter picks, split by
// a config key where asked, each series with its change points.
type Trend struct {
	Metric MetricInfo `json:"metric"`
	By     string     `json:"by,omitempty"`
	Series []Series   `json:"series"`
}

// Series is one group's runs, the oldest first, and where they changed.
type Series struct {
	Group   string   `json:"group,omitempty"`
	Samples []Sample `json:"runs"`
	Changes []Change `json:"changes"`
}

// Change is a change point, at the run that starts the new level.
type Change struct {
	ID        string    `json:"id"`
	StartedAt time.Time `json:"started_at"`
	Index     int       `json:"index"`
	Before    float64   `json:"before"`
	After     float64   `json:"after"`
	Change    float64   `json:"change"`
	PValue    float64   `json:"p_value"`
}

// MinChangeRuns is the fewest runs a series needs for a change to be
// looked for: three on either side.
const MinChangeRuns = 6

// TrendOf is metric's history over the entries f picks, split by the
// config key by ("" for one series), with each series' change points.
func (c *Catalog) TrendOf(ctx context.Context, metric string, f Filter, by string) (*Trend, error) {
	samples, info, err := c.History(ctx, metric, f, by)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, c.noMetric(ctx, metric, f)
	}
	t := &Trend{Metric: *info, By: by}
	groups := map[string]int{}
	for _, s := range samples {
		i, ok := groups[s.Group]
		if !ok {
			i = len(t.Series)
			groups[s.Group] = i
			t.Series = append(t.Series, Series{Group: s.Group})
		}
		t.Series[i].Samples = append(t.Series[i].Samples, s)
	}
	for i := range t.Series {
		if t.Series[i].Changes, err = Changes(t.Series[i].Samples); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Changes are the change points of samples, by E-divisive means with a
// permutation test at 5%.
func Changes(samples []Sample) ([]Change, error) {
	xs := make([]float64, len(samples))
	for i, s := range samples {
		xs[i] = s.Value
	}
	points, err := changepoint.Detect(xs, changepoint.Options{})
	if err != nil {
		return nil, err
	}
	out := []Change{}
	for _, p := range points {
		s := samples[p.Index]
		out = append(out, Change{ID: s.ID, StartedAt: s.StartedAt, Index: p.Index, Before: p.Before, After: p.After, Change: p.Change, PValue: p.PValue})
	}
	return out, nil
}

// noMetric says no entry f picks has metric, and which metrics they have.
func (c *Catalog) noMetric(ctx context.Context, metric string, f Filter) error {
	have, err := c.Metrics(ctx, f)
	if err != nil {
		return err
	}
	if len(have) == 0 {
		return exitcode.Userf("no catalogued run matches the filter (dbrig runs lists them)")
	}
	keys := make([]string, 0, len(have))
	for k := range have {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return exitcode.Userf("no run the filter picks has metric %q; they have %s", metric, strings.Join(keys, ", "))
}
