package catalog

import (
	"slices"
	"strings"
)

// Comparison is entries side by side: their metrics and the telemetry
// that explains them, each with its change from the first entry, and the
// config keys whose values differ between them.
type Comparison struct {
	Entries   []*Entry    `json:"entries"`
	Metrics   []Row       `json:"metrics"`
	Telemetry []Row       `json:"telemetry"`
	Config    []ConfigRow `json:"config_differences"`
}

// Row is one metric in every entry, nil where an entry lacks it; Change
// is each one's (value - first's)/first's, nil without both.
type Row struct {
	Key    string     `json:"key"`
	Label  string     `json:"label"`
	Unit   string     `json:"unit,omitempty"`
	Higher bool       `json:"higher_is_better"`
	Values []*float64 `json:"values"`
	Low    []*float64 `json:"low"`
	High   []*float64 `json:"high"`
	Change []*float64 `json:"change"`
}

// ConfigRow is a config key whose value is not the same in every entry,
// "" where an entry lacks it.
type ConfigRow struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Compare puts entries side by side, the first the one the others are
// measured against.
func Compare(entries []*Entry) *Comparison {
	c := &Comparison{Entries: entries, Metrics: []Row{}, Telemetry: []Row{}, Config: []ConfigRow{}}
	var keys []string
	rows := map[string]*Row{}
	for i, e := range entries {
		for _, m := range e.Metrics {
			r, ok := rows[m.Key]
			if !ok {
				r = &Row{Key: m.Key, Label: m.Label, Unit: m.Unit, Higher: m.Higher,
					Values: make([]*float64, len(entries)), Low: make([]*float64, len(entries)),
					High: make([]*float64, len(entries)), Change: make([]*float64, len(entries))}
				rows[m.Key] = r
				keys = append(keys, m.Key)
			}
			v := m.Value
			r.Values[i], r.Low[i], r.High[i] = &v, m.Low, m.High
		}
	}
	for _, k := range keys {
		r := rows[k]
		if first := r.Values[0]; first != nil && *first != 0 {
			for i, v := range r.Values {
				if v != nil {
					ch := (*v - *first) / *first
					r.Change[i] = &ch
				}
			}
		}
		if strings.HasPrefix(k, TelemetryPrefix) {
			c.Telemetry = append(c.Telemetry, *r)
		} else {
			c.Metrics = append(c.Metrics, *r)
		}
	}
	seen := map[string]bool{}
	var cfg []string
	for _, e := range entries {
		for k := range e.Config {
			if !seen[k] {
				seen[k] = true
				cfg = append(cfg, k)
			}
		}
	}
	slices.Sort(cfg)
	for _, k := range cfg {
		row := ConfigRow{Key: k, Values: make([]string, len(entries))}
		same := true
		for i, e := range entries {
			row.Values[i] = e.Config[k]
			same = same && row.Values[i] == row.Values[0]
			if _, ok := e.Config[k]; !ok {
				same = false
			}
		}
		if !same {
			c.Config = append(c.Config, row)
		}
	}
	return c
}
