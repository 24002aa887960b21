package foreign

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/catalog"
)

// BenchBase writes, beside each run's samples, a summary: one JSON object
// of the run's timestamps, the database's type and version, the
// benchmark, its isolation, scale factor and terminals, its latency
// distribution over every transaction type in microseconds, and its
// throughput and goodput in requests a second (its ResultWriter's
// writeSummary). The summary is read as it is.
const benchbaseTool = "benchbase"

// The summary's fields.
const (
	bbStart      = "Start timestamp (milliseconds)"
	bbElapsed    = "Elapsed Time (nanoseconds)"
	bbDBMS       = "DBMS Type"
	bbVersion    = "DBMS Version"
	bbBenchmark  = "Benchmark Type"
	bbState      = "Final State"
	bbLatency    = "Latency Distribution"
	bbThroughput = "Throughput (requests/second)"
	bbGoodput    = "Goodput (requests/second)"
)

func matchBenchBase(b []byte) bool {
	m, ok := object(b, bbBenchmark)
	if !ok {
		return false
	}
	for _, k := range []string{bbStart, bbDBMS, bbBenchmark, bbThroughput} {
		if m[k] == nil {
			return false
		}
	}
	return true
}

// indexBenchBase reads a summary into its entry. Its workload keeps
// BenchBase's name, as benchbase-tpcc: its throughput counts every
// transaction type a second, at the isolation it was given (serializable
// in BenchBase's samples), and the summary has no count of New-Orders, so
// it is not tproc-c's NOPM and does not chart as it. Its latencies are
// of every type together.
func indexBenchBase(b []byte) (*catalog.Entry, error) {
	var m map[string]json.RawMessage
	if err := decode(b, &m); err != nil {
		return nil, fmt.Errorf("not a BenchBase summary this dbrig reads: %w", err)
	}
	bench, ok := text(m[bbBenchmark])
	if !ok || bench == "" {
		return nil, errField("BenchBase summary", bbBenchmark, "is missing")
	}
	dbms, ok := text(m[bbDBMS])
	if !ok {
		return nil, errField("BenchBase summary", bbDBMS, "is missing")
	}
	start, ok := number(m[bbStart])
	if !ok || start < 0 || start > 1e15 {
		return nil, errField("BenchBase summary", bbStart, "is no time")
	}
	thr, ok := number(m[bbThroughput])
	if !ok {
		return nil, errField("BenchBase summary", bbThroughput, "is no number")
	}
	version, _ := text(m[bbVersion])
	kind := targetKind(dbms)
	e := &catalog.Entry{
		Kind: catalog.KindRun, Workload: "benchbase-" + strings.ToLower(bench),
		TargetKind: kind, TargetVersion: benchbaseVersion(kind, version),
		StartedAt: time.UnixMilli(int64(start)).UTC(), Primary: "throughput",
		Config: map[string]string{},
	}
	if ns, ok := number(m[bbElapsed]); ok && ns >= 0 {
		e.Seconds = ns / 1e9
	}
	for _, k := range []string{"isolation", "scalefactor", "terminals"} {
		if v, ok := text(m[k]); ok {
			e.Config[k] = v
		}
	}
	if v, ok := text(m[bbState]); ok {
		e.Config["final_state"] = v
	}
	// dbrig's names for the same settings, so that a filter on them finds
	// every tool's runs alike.
	if v, ok := e.Config["terminals"]; ok {
		e.Config["vus"] = v
	}
	if v, ok := e.Config["scalefactor"]; ok && strings.EqualFold(bench, "tpcc") {
		e.Config["warehouses"] = v
	}
	e.Metrics = append(e.Metrics, catalog.Metric{Key: "throughput", Label: "Throughput", Unit: "requests/s", Higher: true, Value: thr, Client: ptr(thr)})
	if v, ok := number(m[bbGoodput]); ok {
		e.Metrics = append(e.Metrics, catalog.Metric{Key: "goodput", Label: "Goodput", Unit: "requests/s", Higher: true, Value: v, Client: ptr(v)})
	}
	if raw := m[bbLatency]; raw != nil {
		var lat map[string]json.RawMessage
		if err := json.Unmarshal(raw, &lat); err != nil {
			return nil, errField("BenchBase summary", bbLatency, "is no object")
		}
		for _, p := range []struct{ key, field, label string }{
			{"latency.p95_ms", "95th Percentile Latency (microseconds)", "p95 (all types)"},
			{"latency.p99_ms", "99th Percentile Latency (microseconds)", "p99 (all types)"},
		} {
			if us, ok := number(lat[p.field]); ok {
				e.Metrics = append(e.Metrics, catalog.Metric{Key: p.key, Label: p.label, Unit: "ms", Value: us / 1000})
			}
		}
	}
	return e, nil
}

// benchbaseVersion is the version as dbrig's targets give it: PostgreSQL's
// version() less its name and what it was compiled on.
func benchbaseVersion(kind, v string) string {
	if kind == "postgres" {
		v = strings.TrimPrefix(v, "PostgreSQL ")
		if i := strings.Index(v, " on "); i > 0 {
			v = v[:i]
		}
	}
	return strings.TrimSpace(v)
}
