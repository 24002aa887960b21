// Package result is the versioned result document a run writes. Reports,
// comparisons and sweeps read these documents; they never re-run anything.
package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/metrics"
	"github.com/dbrig/dbrig/internal/workload"
)

// SchemaVersion changes whenever a field changes meaning or goes away.
const SchemaVersion = 1

// Document is one run.
type Document struct {
	SchemaVersion int            `json:"schema_version"`
	Tool          string         `json:"tool"`
	Workload      string         `json:"workload"`
	Target        Target         `json:"target"`
	Host          Host           `json:"host"`
	Config        map[string]any `json:"config"`
	StartedAt     time.Time      `json:"started_at"`
	WindowSeconds float64        `json:"window_seconds"`
	workload.Summary
	Transactions []Tx `json:"transactions"`
	// Counters are the workload's own tallies over the window, the raw
	// figures behind the audit.
	Counters map[string]int64 `json:"counters"`
	// Marks are the database-side counters read at the window's edges.
	Marks       []workload.Mark `json:"marks,omitempty"`
	Series      []driver.Point  `json:"series"`
	SeriesTypes []string        `json:"series_types"`
	Interrupted bool            `json:"interrupted"`
}

// Target names what was measured. URL never holds a password.
type Target struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
	URL     string `json:"url"`
}

// Tx is one transaction type's figures over the measured window.
type Tx struct {
	Name        string          `json:"name"`
	Count       int64           `json:"count"`
	PerMinute   float64         `json:"per_minute"`
	Errors      int64           `json:"errors"`
	Retries     int64           `json:"retries"`
	ErrorSample string          `json:"error_sample,omitempty"`
	Latency     metrics.Latency `json:"latency"`
	// Histogram is HdrHistogram's compressed base64 form, in microseconds.
	Histogram string `json:"histogram"`
}

// Run is what a run hands over to become a document.
type Run struct {
	Workload string
	Target   Target
	Config   map[string]any
	Result   *driver.Result
	Summary  workload.Summary
	TxNames  []string
	// TallyNames name Result.Tally's slots.
	TallyNames []string
	Marks      []workload.Mark
}

// FromRun assembles a document from a run.
func FromRun(run Run) (*Document, error) {
	r := run.Result
	d := &Document{
		SchemaVersion: SchemaVersion, Tool: "dbrig", Workload: run.Workload, Target: run.Target, Host: ReadHost(),
		Config: run.Config, StartedAt: r.Started.UTC(), WindowSeconds: r.WindowSeconds(), Summary: run.Summary,
		Series: r.Series, SeriesTypes: run.TxNames, Interrupted: r.Interrupted,
		Counters: map[string]int64{}, Marks: run.Marks,
	}
	for i, n := range run.TallyNames {
		d.Counters[n] = r.Tally[i]
	}
	for _, tx := range r.Tx {
		enc, err := metrics.Encode(tx.Hist)
		if err != nil {
			return nil, err
		}
		pm := 0.0
		if d.WindowSeconds > 0 {
			pm = float64(tx.Count) * 60 / d.WindowSeconds
		}
		d.Transactions = append(d.Transactions, Tx{
			Name: tx.Name, Count: tx.Count, PerMinute: pm, Errors: tx.Errors, Retries: tx.Retries,
			ErrorSample: tx.ErrorSample, Latency: metrics.Summarize(tx.Hist), Histogram: enc,
		})
	}
	return d, nil
}

// Write stores d at path, via a temporary file and a rename so a crash
// never leaves half a document.
func Write(path string, d *Document) error {
	return writeJSON(path, d)
}

func writeJSON(path string, d any) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dbrig-result-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Read loads a document, refusing one from a newer dbrig.
func Read(path string) (*Document, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: not a dbrig result: %v", path, err)
	}
	if d.SchemaVersion < 1 || d.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: result schema version %d, this dbrig reads up to %d", path, d.SchemaVersion, SchemaVersion)
	}
	return &d, nil
}

// DefaultPath names a new document in dir by workload and start time.
func DefaultPath(dir, wl string, started time.Time) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%s.json", wl, started.UTC().Format("20060102T150405Z")))
}
