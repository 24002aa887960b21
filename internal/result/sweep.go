package result

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// SweepKind marks a sweep document, so readers can tell it from a run.
const SweepKind = "sweep"

// Sweep is one experiment: the expanded matrix, where each run's document
// is, and the statistics over each point's repetitions. The run documents
// stay the source of truth; a sweep references them by path, relative to
// the sweep document's directory.
type Sweep struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // SweepKind
	Name          string `json:"name"`
	Workload      string `json:"workload"`
	// Metrics are the workload's metrics, which every point keeps.
	Metrics       []MetricDef `json:"metrics"`
	PrimaryMetric string      `json:"primary_metric"`
	PrimaryTx     string      `json:"primary_transaction,omitempty"`
	Target        Target      `json:"target"`
	Host          Host        `json:"host"`
	// Spec is the experiment as written, after defaults.
	Spec json.RawMessage `json:"spec"`
	// Settings are the server settings every point shares (managed targets).
	Settings map[string]string `json:"settings,omitempty"`
	// Varied names the varied parameters, in the spec's order.
	Varied []string `json:"varied"`
	// Baseline holds the parameter values that define the baseline; the
	// other varied parameters match the point being compared.
	Baseline  map[string]string `json:"baseline,omitempty"`
	Repeat    int               `json:"repeat"`
	StartedAt time.Time         `json:"started_at"`
	Points    []SweepPoint      `json:"points"`
	// Order is the run order as (point, repetition) pairs, interleaved.
	Order [][2]int `json:"order"`
	// Done counts the runs of Order finished so far; a resume starts there.
	Done int `json:"done"`
	// Notes are facts a reader needs, such as caches that could not be dropped.
	Notes       []string `json:"notes,omitempty"`
	Complete    bool     `json:"complete"`
	Interrupted bool     `json:"interrupted"`
}

// SweepPoint is one combination of the varied parameters.
type SweepPoint struct {
	Params map[string]string `json:"params"`
	// Runs are the run documents' paths, by repetition ("" until run).
	Runs []string `json:"runs"`
	// Values holds each finished repetition's value of every metric, by
	// metric key: the figure that stands for it in the run (Metric.Value).
	Values map[string][]float64 `json:"values"`
	// P95 holds each repetition's p95 latency of the primary transaction, in ms.
	P95 []float64 `json:"p95_ms"`
	// Resident holds each repetition's fraction of the benchmark's pages
	// found in the buffer cache after a full-cache warm-up (prewarm: full).
	Resident []float64 `json:"resident,omitempty"`
	// Telemetry holds each repetition's figures that explain a point (CPU
	// busy, storage reads and latency, cache hits), by telemetry.Explains
	// key; a repetition without a figure has none in the list.
	Telemetry map[string][]float64 `json:"telemetry,omitempty"`
	// Steady is each repetition's steady state, by repetition as Runs
	// (null where not run, or nothing to judge); absent in older sweeps.
	Steady []*Steady `json:"steady_state,omitempty"`
	// Verdicts are each repetition's verdict on what limited it, by
	// repetition as Runs; absent in older sweeps.
	Verdicts []*Verdict `json:"verdicts,omitempty"`
	// Stats and Gains are per metric key.
	Stats map[string]*Stats `json:"stats,omitempty"`
	Gains map[string]*Gain  `json:"gains,omitempty"`
	// Faults holds each finished repetition's figures of what the faults
	// in its run cost, by FaultDefs key: its transactions in doubt; the
	// outage around its actions where it watched one; its durability
	// audit's counts where it had one. A repetition without a figure has
	// none in the list. Absent in older sweeps.
	Faults map[string][]float64 `json:"faults,omitempty"`
	// FaultStats and FaultChanges are per fault key: the mean with its
	// interval, and the change of the mean from the baseline point's, in
	// the figure's own unit.
	FaultStats   map[string]*Stats  `json:"fault_stats,omitempty"`
	FaultChanges map[string]*Change `json:"fault_changes,omitempty"`
	// Durability sums the durability audits of the repetitions that had
	// one; absent where none had.
	Durability *DurabilitySum `json:"durability,omitempty"`
	// BaselinePoint is the index of the point this one is compared with;
	// -1 where there is none, or it is the baseline itself.
	BaselinePoint int `json:"baseline_point"`
	// ServerVersion is the server's own version at this point's runs,
	// where the sweep varies the server's build.
	ServerVersion string   `json:"server_version,omitempty"`
	Errors        []string `json:"errors,omitempty"`
	// Thresholds are each finished repetition's verdicts on the spec's
	// thresholds, by repetition; absent when it has none.
	Thresholds [][]ThresholdResult `json:"thresholds,omitempty"`
}

// P95Stats is the mean of the repetitions' p95 latencies with its 95%
// interval; nil with none.
func (p *SweepPoint) P95Stats() *Stats { return Summarize(p.P95) }

// VariesServer tells whether the points ran on different builds of the
// server, each recording its version.
func (s *Sweep) VariesServer() bool {
	for _, p := range s.Points {
		if p.ServerVersion != "" {
			return true
		}
	}
	return false
}

// HasFault tells whether any point has a mean of the fault figure key.
func (s *Sweep) HasFault(key string) bool {
	return slices.ContainsFunc(s.Points, func(p SweepPoint) bool { return p.FaultStats[key] != nil })
}

// Audited tells whether any point had its runs audited for durability.
func (s *Sweep) Audited() bool {
	return slices.ContainsFunc(s.Points, func(p SweepPoint) bool { return p.Durability != nil })
}

// Primary is the sweep's primary metric.
func (s *Sweep) Primary() MetricDef {
	for _, m := range s.Metrics {
		if m.Key == s.PrimaryMetric {
			return m
		}
	}
	return MetricDef{Key: s.PrimaryMetric, Label: s.PrimaryMetric, HigherIsBetter: true}
}

// Stats summarize a point's repetitions of one metric: the mean and the
// 95% confidence interval of the mean (Student's t).
type Stats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// Gain is the % change of a point's mean over its baseline's, with a 95%
// interval; Significant is false when the interval includes zero.
type Gain struct {
	Pct         float64 `json:"pct"`
	Low         float64 `json:"low"`
	High        float64 `json:"high"`
	Significant bool    `json:"significant"`
}

// ReadSweep loads a sweep document, upgrading one from an older dbrig.
func ReadSweep(path string) (*Sweep, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSweep(path, b)
}

// ParseSweep is ReadSweep of the document b, read from path. An upgraded
// document says schema 2, as it now is: a resumed sweep writes it back in
// schema 2's shape, which another upgrade would read without its metrics.
func ParseSweep(path string, b []byte) (*Sweep, error) {
	var head struct {
		Kind          string `json:"kind"`
		SchemaVersion int    `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Kind != SweepKind {
		return nil, fmt.Errorf("%s: not a dbrig sweep document", path)
	}
	if head.SchemaVersion < 1 || head.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: sweep schema version %d, this dbrig reads up to %d", path, head.SchemaVersion, SchemaVersion)
	}
	var s Sweep
	var err error
	if head.SchemaVersion == 1 {
		err = upgradeSweep(b, &s)
		s.SchemaVersion = SchemaVersion
	} else {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not a dbrig sweep document: %v", path, err)
	}
	return &s, nil
}

// WriteSweep stores s at path atomically, as Write does for runs.
func WriteSweep(path string, s *Sweep) error {
	return writeJSON(path, s)
}

// IsSweep tells whether the document b is a sweep.
func IsSweep(b []byte) bool {
	var k struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(b, &k) == nil && k.Kind == SweepKind
}
