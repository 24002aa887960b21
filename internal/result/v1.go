package result

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/workload"
)

// Schema 1 kept a fixed pair of headline rates at the top level of a run
// document: NAME for the database side (absent where the database keeps no
// counter) and NAME_client for the client side. Its sweep points held the
// primary rate's repetitions in an array named after it. Everything else
// kept its name and meaning in schema 2, so upgrading rebuilds the metrics
// from those pairs, with labels and order from the workload's declaration
// where this dbrig knows the workload.

const clientSuffix = "_client"

// declared is the workload's declaration, if this dbrig has the workload.
func declared(name string) (workload.Info, bool) {
	w, ok := workload.New(name)
	if !ok {
		return workload.Info{}, false
	}
	return w.Info(), true
}

// defFor is a metric's definition from the declaration, or a plain one.
func defFor(info workload.Info, key string) MetricDef {
	if m, ok := info.Metric(key); ok {
		return MetricDef{Key: m.Key, Label: m.Label, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter}
	}
	return MetricDef{Key: key, Label: strings.ToUpper(key), HigherIsBetter: true}
}

// declaredOrder sorts metric keys in the declaration's order, unknown
// keys last and by name.
func declaredOrder(info workload.Info, keys []string) {
	rank := func(k string) int {
		if i := slices.IndexFunc(info.Metrics, func(m workload.Metric) bool { return m.Key == k }); i >= 0 {
			return i
		}
		return len(info.Metrics)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
}

// primaryOf is the declaration's primary metric if the keys have it, else
// the first key.
func primaryOf(info workload.Info, keys []string) string {
	if slices.Contains(keys, info.Primary) || len(keys) == 0 {
		return info.Primary
	}
	return keys[0]
}

// upgradeRun fills d's metrics from the schema-1 document b.
func upgradeRun(b []byte, d *Document) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	values := map[string]Metric{}
	var keys []string
	for k, v := range raw {
		name, ok := strings.CutSuffix(k, clientSuffix)
		var client float64
		if !ok || json.Unmarshal(v, &client) != nil {
			continue
		}
		m := Metric{Client: &client}
		var db float64
		if v, ok := raw[name]; ok && json.Unmarshal(v, &db) == nil {
			m.DB = &db
		}
		values[name] = m
		keys = append(keys, name)
	}
	info, _ := declared(d.Workload)
	declaredOrder(info, keys)
	for _, k := range keys {
		m := values[k]
		m.MetricDef = defFor(info, k)
		d.Metrics = append(d.Metrics, m)
	}
	d.PrimaryMetric, d.PrimaryTx = primaryOf(info, keys), info.PrimaryTx
	return nil
}

// v1PointKeys are a schema-1 point's own keys; any other array of numbers
// is the primary metric's repetitions.
var v1PointKeys = []string{"params", "runs", "p95_ms", "resident", "stats", "baseline_point", "gain", "errors"}

// upgradeSweep reads the schema-1 sweep document b into s. Its points'
// statistics and gain were the primary metric's, and are kept as written.
func upgradeSweep(b []byte, s *Sweep) error {
	var doc struct {
		Sweep
		Points []json.RawMessage `json:"points"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	*s = doc.Sweep
	s.Points = nil
	info, _ := declared(s.Workload)
	var keys []string
	for _, rawPoint := range doc.Points {
		var p SweepPoint
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(rawPoint, &fields); err != nil {
			return err
		}
		var old struct {
			Stats *Stats `json:"stats"`
			Gain  *Gain  `json:"gain"`
		}
		if err := json.Unmarshal(rawPoint, &old); err != nil {
			return err
		}
		delete(fields, "stats")
		rest, _ := json.Marshal(fields)
		if err := json.Unmarshal(rest, &p); err != nil {
			return err
		}
		p.Values = map[string][]float64{}
		for k, v := range fields {
			var xs []float64
			if slices.Contains(v1PointKeys, k) || json.Unmarshal(v, &xs) != nil {
				continue
			}
			p.Values[k] = xs
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			p.Stats, p.Gains = map[string]*Stats{}, map[string]*Gain{}
			if old.Stats != nil {
				p.Stats[k] = old.Stats
			}
			if old.Gain != nil {
				p.Gains[k] = old.Gain
			}
		}
		s.Points = append(s.Points, p)
	}
	declaredOrder(info, keys)
	s.Metrics = nil
	for _, k := range keys {
		s.Metrics = append(s.Metrics, defFor(info, k))
	}
	s.PrimaryMetric, s.PrimaryTx = primaryOf(info, keys), info.PrimaryTx
	return nil
}
