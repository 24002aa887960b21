package foreign

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/catalog"
)

// k6 writes its end-of-test summary as JSON in three shapes, all read
// here as they are:
//   - --summary-export FILE: "metrics" maps each metric's name to its
//     values, flat ({"count", "rate"} of a counter, {"avg", "p(95)", ...}
//     of a trend, {"passes", "fails", "value"} of a rate), beside
//     "root_group";
//   - the data handleSummary is given: each metric as {"type",
//     "contains", "values"}, with "state" holding testRunDurationMs;
//   - the machine-readable summary (--new-machine-readable-summary):
//     "results" holding "metrics" as a list of {"name", "type",
//     "contains", "values"} and "checks", with "config" (duration in
//     seconds, execution, script) and "metadata" (generatedAt,
//     k6Version).
const k6Tool = "k6"

// k6Builtin are metrics every k6 run (or every HTTP one) reports, by
// which a summary is told from other JSON that has "metrics".
var k6Builtin = []string{"iterations", "iteration_duration", "http_reqs", "http_req_duration", "data_received", "data_sent", "vus", "vus_max", "checks"}

// k6Metric is a metric's values, whatever the shape: a rate's share
// under "rate".
type k6Metric struct {
	typ    string
	values map[string]float64
}

// k6Needles are the quoted names of built-in metrics that no dbrig
// document has ("vus", "checks" and "iterations" are words of its own
// too): a document without any is not decoded to be told apart.
var k6Needles = []string{`"iteration_duration"`, `"http_reqs"`, `"http_req_duration"`, `"data_received"`, `"data_sent"`, `"vus_max"`}

func matchK6(b []byte) bool {
	m, ok := object(b, k6Needles...)
	if !ok {
		return false
	}
	names, ok := k6Names(m)
	return ok && slices.ContainsFunc(k6Builtin, func(n string) bool { return slices.Contains(names, n) })
}

// k6Names is the summary's metric names, false for a document not shaped
// as one.
func k6Names(m map[string]json.RawMessage) ([]string, bool) {
	if raw := m["metrics"]; raw != nil {
		var ms map[string]json.RawMessage
		if json.Unmarshal(raw, &ms) != nil {
			return nil, false
		}
		var names []string
		for n, v := range ms {
			if _, ok := object(v); !ok {
				return nil, false
			}
			names = append(names, n)
		}
		return names, true
	}
	var res struct {
		Metrics []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"metrics"`
	}
	if m["results"] == nil || m["metadata"] == nil || json.Unmarshal(m["results"], &res) != nil {
		return nil, false
	}
	var names []string
	for _, x := range res.Metrics {
		if x.Name == "" || x.Type == "" {
			return nil, false
		}
		names = append(names, x.Name)
	}
	return names, true
}

// indexK6 reads a k6 summary into its entry: the run's rates of
// iterations and HTTP requests, its HTTP requests' p95 and failures, and
// the share of its checks that passed. Its workload is k6's, the script
// (where the summary names it) its name and config.
func indexK6(b []byte) (*catalog.Entry, error) {
	var top map[string]json.RawMessage
	if err := decode(b, &top); err != nil {
		return nil, fmt.Errorf("not a k6 summary this dbrig reads: %w", err)
	}
	e := &catalog.Entry{Kind: catalog.KindRun, Workload: k6Tool, TargetKind: "http", Config: map[string]string{}}
	var metrics map[string]k6Metric
	var err error
	if top["metrics"] != nil {
		metrics, err = k6Legacy(top, e)
	} else {
		metrics, err = k6MachineReadable(b, e)
	}
	if err != nil {
		return nil, err
	}
	if e.Seconds == 0 {
		// An export keeps no duration; each counter's rate is its count
		// over the run's, so any gives it.
		for _, n := range []string{"iterations", "http_reqs"} {
			if c, r := metrics[n].values["count"], metrics[n].values["rate"]; c > 0 && r > 0 {
				e.Seconds = c / r
				break
			}
		}
	}
	perSecond := func(name string) (float64, bool) {
		m, ok := metrics[name]
		if !ok {
			return 0, false
		}
		if r, ok := m.values["rate"]; ok {
			return r, true
		}
		if c, ok := m.values["count"]; ok && e.Seconds > 0 {
			return c / e.Seconds, true
		}
		return 0, false
	}
	if v, ok := perSecond("http_reqs"); ok {
		e.Metrics = append(e.Metrics, catalog.Metric{Key: "http_reqs_per_s", Label: "HTTP requests/s", Unit: "requests/s", Higher: true, Value: v, Client: ptr(v)})
	}
	if v, ok := perSecond("iterations"); ok {
		e.Metrics = append(e.Metrics, catalog.Metric{Key: "iterations_per_s", Label: "Iterations/s", Unit: "iterations/s", Higher: true, Value: v, Client: ptr(v)})
	}
	// k6 keeps times in milliseconds.
	for _, p := range []struct{ key, stat string }{{"latency.p95_ms", "p(95)"}, {"latency.p99_ms", "p(99)"}} {
		if v, ok := metrics["http_req_duration"].values[p.stat]; ok {
			e.Metrics = append(e.Metrics, catalog.Metric{Key: p.key, Label: "http_req_duration " + p.stat, Unit: "ms", Value: v})
		}
	}
	if v, ok := k6Share(metrics, "checks", "checks_succeeded"); ok {
		e.Metrics = append(e.Metrics, catalog.Metric{Key: "checks_passed_pct", Label: "Checks passed", Unit: "%", Higher: true, Value: 100 * v})
	}
	if v, ok := k6Share(metrics, "http_req_failed"); ok {
		e.Metrics = append(e.Metrics, catalog.Metric{Key: "http_req_failed_pct", Label: "HTTP requests failed", Unit: "%", Value: 100 * v})
	}
	e.Primary = "iterations_per_s"
	if _, ok := e.Metric("http_reqs_per_s"); ok {
		e.Primary = "http_reqs_per_s"
	}
	if vus := metrics["vus_max"].values; vus != nil {
		if v, ok := vus["max"]; ok {
			e.Config["vus"] = formatNumber(v)
		} else if v, ok := vus["value"]; ok {
			e.Config["vus"] = formatNumber(v)
		}
	}
	return e, nil
}

// k6Share is the first of the rate metrics names that the summary has.
func k6Share(metrics map[string]k6Metric, names ...string) (float64, bool) {
	for _, n := range names {
		if v, ok := metrics[n].values["rate"]; ok && metrics[n].typ == "rate" {
			return v, true
		}
	}
	return 0, false
}

// k6Legacy reads an export or handleSummary's data: a metric with
// "values" is the latter's, one without the former's, flat, whose type
// its fields tell.
func k6Legacy(top map[string]json.RawMessage, e *catalog.Entry) (map[string]k6Metric, error) {
	var raw map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["metrics"], &raw); err != nil {
		return nil, errField("k6 summary", "metrics", "is not an object of metrics")
	}
	out := map[string]k6Metric{}
	for name, m := range raw {
		km := k6Metric{values: map[string]float64{}}
		fields := m
		if v := m["values"]; v != nil {
			if err := json.Unmarshal(v, &fields); err != nil {
				return nil, errField("k6 summary", name+".values", "is not an object")
			}
			km.typ, _ = text(m["type"])
		}
		for k, v := range fields {
			if f, ok := number(v); ok && k != "type" && k != "contains" {
				km.values[k] = f
			}
		}
		if m["values"] == nil {
			km.typ = k6TypeOf(km.values)
			if km.typ == "rate" {
				if v, ok := km.values["value"]; ok {
					km.values["rate"] = v
				}
				delete(km.values, "value")
			}
		}
		out[name] = km
	}
	if rawState := top["state"]; rawState != nil {
		var state map[string]json.RawMessage
		if err := json.Unmarshal(rawState, &state); err != nil {
			return nil, errField("k6 summary", "state", "is not an object")
		}
		if ms, ok := number(state["testRunDurationMs"]); ok && ms > 0 {
			e.Seconds = ms / 1000
		}
	}
	return out, nil
}

// k6TypeOf is an exported metric's type, which the export does not keep,
// from its fields.
func k6TypeOf(v map[string]float64) string {
	has := func(k string) bool { _, ok := v[k]; return ok }
	switch {
	case has("passes") && has("fails"):
		return "rate"
	case has("count") && has("rate"):
		return "counter"
	case has("avg") || has("med") || has("p(95)"):
		return "trend"
	case has("value"):
		return "gauge"
	}
	return ""
}

// k6MachineReadable reads the machine-readable summary, whose rates are
// {"matches", "total", "rate"} and whose counters have no rate.
func k6MachineReadable(b []byte, e *catalog.Entry) (map[string]k6Metric, error) {
	type metric struct {
		Name   string                     `json:"name"`
		Type   string                     `json:"type"`
		Values map[string]json.RawMessage `json:"values"`
	}
	var s struct {
		Config struct {
			Duration  *float64 `json:"duration"`
			Execution string   `json:"execution"`
			Script    string   `json:"script"`
		} `json:"config"`
		Metadata struct {
			GeneratedAt time.Time `json:"generatedAt"`
			K6Version   string    `json:"k6Version"`
		} `json:"metadata"`
		Results struct {
			Metrics []metric `json:"metrics"`
			Checks  struct {
				Metrics []metric `json:"metrics"`
			} `json:"checks"`
		} `json:"results"`
	}
	if err := decode(b, &s); err != nil {
		return nil, fmt.Errorf("not a k6 summary this dbrig reads: %w", err)
	}
	if len(s.Results.Metrics) == 0 {
		return nil, errField("k6 summary", "results.metrics", "are missing")
	}
	if d := s.Config.Duration; d != nil && *d > 0 && *d < 1e9 {
		e.Seconds = *d
		if !s.Metadata.GeneratedAt.IsZero() {
			// The summary is made at the run's end.
			e.StartedAt = s.Metadata.GeneratedAt.Add(-time.Duration(*d * float64(time.Second))).UTC()
		}
	}
	if s.Config.Script != "" {
		e.Name = path.Base(strings.ReplaceAll(s.Config.Script, `\`, "/"))
		e.Config["script"] = s.Config.Script
	}
	if s.Config.Execution != "" {
		e.Config["execution"] = s.Config.Execution
	}
	if s.Metadata.K6Version != "" {
		e.Config["k6_version"] = s.Metadata.K6Version
	}
	out := map[string]k6Metric{}
	for _, m := range append(s.Results.Metrics, s.Results.Checks.Metrics...) {
		km := k6Metric{typ: m.Type, values: map[string]float64{}}
		for k, v := range m.Values {
			if f, ok := number(v); ok {
				km.values[k] = f
			}
		}
		if _, ok := out[m.Name]; !ok && m.Name != "" {
			out[m.Name] = km
		}
	}
	return out, nil
}
