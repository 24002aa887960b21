package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// The kinds of entry: a run of one process, a part of a split run, the
// parts merged, a sweep.
const (
	KindRun    = "run"
	KindPart   = "part"
	KindMerged = "merged"
	KindSweep  = "sweep"
)

// Entry is what the catalogue knows of one document: a few of its fields,
// under the document's own JSON names where it has them, as the
// catalogue's columns index them. The document stays the source of truth,
// kept whole beside its entry.
type Entry struct {
	// ID is the hex SHA-256 of the document's bytes: the same document
	// imported twice is one entry, in every catalogue alike.
	ID            string    `json:"id"`
	Kind          string    `json:"kind"`
	Tool          string    `json:"tool"`
	Workload      string    `json:"workload"`
	TargetKind    string    `json:"target_kind"`
	TargetVersion string    `json:"target_version"`
	TargetURL     string    `json:"target_url,omitempty"`
	Host          string    `json:"host"`
	Name          string    `json:"name,omitempty"`
	StartedAt     time.Time `json:"started_at"`
	Seconds       float64   `json:"window_seconds"`
	Primary       string    `json:"primary_metric"`
	Verdict       string    `json:"verdict,omitempty"`
	Commit        string    `json:"commit,omitempty"`
	Path          string    `json:"path,omitempty"`
	Size          int64     `json:"size"`
	Schema        int       `json:"schema_version"`
	RecordedAt    time.Time `json:"recorded_at"`
	// Config is the run's configuration flattened, "key.sub" for a nested
	// one, each value as its JSON text (a string without its quotes).
	Config  map[string]string `json:"config"`
	Metrics []Metric          `json:"metrics"`
	Tags    []string          `json:"tags"`
}

// Metric is a headline metric of an entry: the value that stands for it,
// and the interval around it where the entry gives one.
type Metric struct {
	Key    string   `json:"key"`
	Label  string   `json:"label"`
	Unit   string   `json:"unit,omitempty"`
	Higher bool     `json:"higher_is_better"`
	Value  float64  `json:"value"`
	Low    *float64 `json:"low,omitempty"`
	High   *float64 `json:"high,omitempty"`
	DB     *float64 `json:"db,omitempty"`
	Client *float64 `json:"client,omitempty"`
}

// ShortID is how an ID prints: enough of it to tell 10,000 entries apart.
func ShortID(id string) string { return id[:min(12, len(id))] }

// Metric is the entry's metric with key.
func (e *Entry) Metric(key string) (Metric, bool) {
	i := slices.IndexFunc(e.Metrics, func(m Metric) bool { return m.Key == key })
	if i < 0 {
		return Metric{}, false
	}
	return e.Metrics[i], true
}

// Hash is a document's ID.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Index reads the document b into its entry, refusing anything that is
// not a document this dbrig (or an importer) reads.
func Index(path string, b []byte) (*Entry, error) {
	// Decoding a document is most of what its ingest costs: each of these
	// decodes it once, what tells them apart costs no decoding, but where
	// a document could be a sweep.
	var e *Entry
	var err error
	if imp, ok := foreign(b); ok {
		if e, err = imp.Index(b); err == nil {
			e.Tool = imp.Tool
		}
	} else if version, ok := sweepVersion(b); ok {
		e, err = indexSweep(path, b, version)
	} else {
		e, err = indexRun(path, b)
	}
	if err != nil {
		return nil, err
	}
	e.ID = Hash(b)
	e.Size = int64(len(b))
	e.Path = path
	e.TargetURL = dbtarget.RedactAny(e.TargetURL)
	return e, nil
}

// sweepVersion is the schema version of a sweep's document, false of any
// other: only a document with a "sweep" string, which its kind would be,
// is decoded to tell.
func sweepVersion(b []byte) (int, bool) {
	if !bytes.Contains(b, []byte(`"`+result.SweepKind+`"`)) {
		return 0, false
	}
	var head struct {
		Kind          string `json:"kind"`
		SchemaVersion int    `json:"schema_version"`
	}
	if json.Unmarshal(b, &head) != nil || head.Kind != result.SweepKind {
		return 0, false
	}
	return head.SchemaVersion, true
}

func indexRun(path string, b []byte) (*Entry, error) {
	d, version, err := result.ParseRunVersion(path, b)
	if err != nil {
		return nil, err
	}
	e := &Entry{
		Kind: KindRun, Tool: "dbrig", Workload: d.Workload, Schema: version,
		TargetKind: d.Target.Kind, TargetVersion: d.Target.Version, TargetURL: d.Target.URL,
		Host: d.Host.Hostname, StartedAt: d.StartedAt, Seconds: d.WindowSeconds,
		Primary: d.PrimaryMetric, Config: flatten(d.Config),
	}
	switch {
	case d.Part != nil:
		e.Kind = KindPart
	case d.Parts != nil:
		e.Kind = KindMerged
	}
	if v := result.VerdictOf(d); v != nil {
		e.Verdict = v.Top()
	}
	rel := batchInterval(d)
	for _, m := range d.Metrics {
		if m.DB == nil && m.Client == nil {
			continue
		}
		cm := Metric{Key: m.Key, Label: m.Label, Unit: m.Unit, Higher: m.HigherIsBetter, Value: m.Value(), DB: m.DB, Client: m.Client}
		if m.HigherIsBetter && rel > 0 && !math.IsNaN(cm.Value) {
			lo, hi := cm.Value*(1-rel), cm.Value*(1+rel)
			cm.Low, cm.High = &lo, &hi
		}
		e.add(cm)
	}
	for _, tx := range d.Transactions {
		if tx.Name == d.PrimaryTx && tx.Count > 0 {
			e.add(Metric{Key: "latency.p95_ms", Label: tx.Name + " p95", Unit: "ms", Value: tx.Latency.P95})
		}
	}
	if d.Telemetry != nil {
		sum := telemetry.Summarize(d.Telemetry)
		for _, x := range telemetry.Explains {
			if v, ok := x.Value(sum); ok {
				e.add(Metric{Key: TelemetryPrefix + x.Key, Label: x.Label, Unit: x.Unit, Value: v})
			}
		}
	}
	return e, nil
}

// TelemetryPrefix starts the keys of the telemetry's figures that explain
// a run (CPU busy, cache misses/s, ...), kept with its metrics so that
// their history is drawn and compared alike.
const TelemetryPrefix = "telemetry."

// add keeps m unless it is no number.
func (e *Entry) add(m Metric) {
	if !math.IsNaN(m.Value) && !math.IsInf(m.Value, 0) && !slices.ContainsFunc(e.Metrics, func(o Metric) bool { return o.Key == m.Key }) {
		e.Metrics = append(e.Metrics, m)
	}
}

// indexSweep keeps a sweep as an entry of its own, found by its name and
// what it varied; its runs are entries of their own, with their points'
// parameters in their config; version is the schema its document was
// written in.
func indexSweep(path string, b []byte, version int) (*Entry, error) {
	s, err := result.ParseSweep(path, b)
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{"points": strconv.Itoa(len(s.Points)), "repeat": strconv.Itoa(s.Repeat), "done": strconv.Itoa(s.Done)}
	if len(s.Varied) > 0 {
		v, _ := json.Marshal(s.Varied)
		cfg["varied"] = string(v)
	}
	return &Entry{
		Kind: KindSweep, Tool: "dbrig", Workload: s.Workload, Name: s.Name, Schema: version,
		TargetKind: s.Target.Kind, TargetVersion: s.Target.Version, TargetURL: s.Target.URL,
		Host: s.Host.Hostname, StartedAt: s.StartedAt, Primary: s.PrimaryMetric,
		Config: cfg,
	}, nil
}

// flatten is cfg's values by dotted key, each as its JSON text and a
// string without its quotes, so that --where config.vus=8 and
// config.mode=procs read as a person writes them.
func flatten(cfg map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				walk(prefix+"."+k, sub)
			}
		case string:
			out[prefix] = x
		case float64:
			out[prefix] = strconv.FormatFloat(x, 'g', -1, 64)
		case nil:
			out[prefix] = "null"
		default:
			j, _ := json.Marshal(x)
			out[prefix] = string(j)
		}
	}
	for k, v := range cfg {
		walk(k, v)
	}
	return out
}

// batchInterval is the half-width of a 95% interval around a run's rate,
// as a fraction of it, by the method of batch means: the measured
// window's seconds in ten batches (fewer in a short window, never fewer
// than four of two seconds), each batch's completions of the primary
// transaction (all types where it has none) an estimate of the rate, and
// Student's t over them. Batches of several seconds are nearly
// independent where seconds are not, so the interval is the run's own
// noise, not a guess; 0 where the window is too short to tell.
func batchInterval(d *result.Document) float64 {
	col := slices.Index(d.SeriesTypes, d.PrimaryTx)
	var per []float64
	for _, p := range d.Series {
		if p.Phase != "measure" {
			continue
		}
		var n int64
		for i, c := range p.Counts {
			if col < 0 || i == col {
				n += c
			}
		}
		per = append(per, float64(n))
	}
	k := min(10, len(per)/2)
	if k < 4 {
		return 0
	}
	size := len(per) / k
	batches := make([]float64, k)
	for i := range k {
		for _, v := range per[i*size : (i+1)*size] {
			batches[i] += v
		}
	}
	s := result.Summarize(batches)
	if s == nil || s.Mean <= 0 || math.IsNaN(s.CIHigh) {
		return 0
	}
	return (s.CIHigh - s.Mean) / s.Mean
}
