package catalog

import (
	"context"
	"database/sql"
	"strconv"
	"time"
)

// Sample is one entry's value of a metric, for its history.
type Sample struct {
	ID        string    `json:"id"`
	StartedAt time.Time `json:"started_at"`
	Value     float64   `json:"value"`
	Low       *float64  `json:"low,omitempty"`
	High      *float64  `json:"high,omitempty"`
	// Group is the entry's value of the config key the history is split
	// by, "" where it has none or none was asked for.
	Group string `json:"group,omitempty"`
}

// MetricInfo is what a metric is, as the newest entry with it says.
type MetricInfo struct {
	Key, Label, Unit string
	Higher           bool
}

// History is metric's value in each entry f picks, the oldest first,
// each with its interval and, where by names a config key ("vus"), its
// value of that key; with its definition, nil where no entry has it.
func (c *Catalog) History(ctx context.Context, metric string, f Filter, by string) ([]Sample, *MetricInfo, error) {
	w := f.where()
	key := w.arg(metric)
	join := ` JOIN metrics m ON m.entry = e.id AND m.key = ` + key
	group := `''`
	if by != "" {
		join += ` LEFT JOIN config g ON g.entry = e.id AND g.key = ` + w.arg(by)
		group = `COALESCE(g.value, '')`
	}
	inner := `SELECT e.id, e.started_at, m.value, m.low, m.high, ` + group + ` AS grp, m.label, m.unit, m.higher FROM entries e` + join + w.sql()
	q := inner + ` ORDER BY e.started_at, e.id`
	if f.Limit > 0 {
		q = `SELECT * FROM (` + inner + ` ORDER BY e.started_at DESC, e.id LIMIT ` + strconv.Itoa(f.Limit) + `) h ORDER BY started_at, id`
	}
	var out []Sample
	var info *MetricInfo
	err := c.each(ctx, q, w.args, func(r *sql.Rows) error {
		var s Sample
		var started int64
		var low, high sql.NullFloat64
		var m MetricInfo
		var higher int
		if err := r.Scan(&s.ID, &started, &s.Value, &low, &high, &s.Group, &m.Label, &m.Unit, &higher); err != nil {
			return err
		}
		s.StartedAt = time.UnixMicro(started).UTC()
		s.Low, s.High = ptr(low), ptr(high)
		m.Key, m.Higher = metric, higher != 0
		info = &m
		out = append(out, s)
		return nil
	})
	return out, info, err
}

// Metrics are the metric keys the entries f picks have, with how many
// have each: what a history can be drawn of.
func (c *Catalog) Metrics(ctx context.Context, f Filter) (map[string]int, error) {
	return c.keyCounts(ctx, f, `SELECT m.key, count(*) FROM metrics m JOIN entries e ON e.id = m.entry`)
}

// ConfigKeys are the config keys the entries f picks have, with how many
// distinct values each takes: what a history can be split by.
func (c *Catalog) ConfigKeys(ctx context.Context, f Filter) (map[string]int, error) {
	return c.keyCounts(ctx, f, `SELECT g.key, count(DISTINCT g.value) FROM config g JOIN entries e ON e.id = g.entry`)
}

// keyCounts runs sel, a select of a key and a count joined to entries e,
// on the entries f picks, grouped by the key.
func (c *Catalog) keyCounts(ctx context.Context, f Filter, sel string) (map[string]int, error) {
	w := f.where()
	out := map[string]int{}
	err := c.each(ctx, sel+w.sql()+` GROUP BY 1`, w.args, func(r *sql.Rows) error {
		var k string
		var n int
		if err := r.Scan(&k, &n); err != nil {
			return err
		}
		out[k] = n
		return nil
	})
	return out, err
}

// Workloads are the workloads of the entries f picks, by name.
func (c *Catalog) Workloads(ctx context.Context, f Filter) ([]string, error) {
	w := f.where()
	out := []string{}
	err := c.each(ctx, `SELECT DISTINCT e.workload FROM entries e`+w.sql()+` ORDER BY e.workload`, w.args, func(r *sql.Rows) error {
		var s string
		if err := r.Scan(&s); err != nil {
			return err
		}
		if s != "" {
			out = append(out, s)
		}
		return nil
	})
	return out, err
}
