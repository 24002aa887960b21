// Package result is the versioned result document a run writes. Reports,
// comparisons and sweeps read these documents; they never re-run anything.
package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/atomicfile"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

// SchemaVersion changes whenever a field changes meaning or goes away;
// a field added with omitempty, which older documents simply lack, keeps
// it (errors_by_class, events and durability came so). Version 2 made the
// headline figures the workload's own declared metrics; version 1
// documents are still read (see v1.go).
const SchemaVersion = 2

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
	// Metrics are the workload's headline figures, in its order.
	Metrics []Metric `json:"metrics"`
	// PrimaryMetric is the key of the metric that stands for the run.
	PrimaryMetric string `json:"primary_metric"`
	// PrimaryTx is the transaction type whose latency stands for the run.
	PrimaryTx string `json:"primary_transaction,omitempty"`
	// Lines are the workload's own summary lines (agreement, efficiency).
	Lines        []string       `json:"summary_lines,omitempty"`
	Extra        map[string]any `json:"extra,omitempty"`
	Audit        []AuditItem    `json:"audit"`
	Transactions []Tx           `json:"transactions"`
	// Counters are the workload's own tallies over the window, the raw
	// figures behind the audit.
	Counters map[string]int64 `json:"counters"`
	// Marks are the database-side counters read at the window's edges.
	Marks       []Mark   `json:"marks,omitempty"`
	Series      []Point  `json:"series"`
	SeriesTypes []string `json:"series_types"`
	Interrupted bool     `json:"interrupted"`
	// ErrorClasses counts the window's errors by what the target said
	// they were: connection_lost, retry (after the last retry), other.
	ErrorClasses map[string]int64 `json:"errors_by_class,omitempty"`
	// Events are what was done to the system under test during the run
	// (a server killed, and up again), on the series' clock.
	Events []Event `json:"events,omitempty"`
	// ActionOutages are what each action that stops the application
	// (--kill-server-at, a failover) cost it, in the order they started.
	ActionOutages []ActionOutage `json:"action_outages,omitempty"`
	// Outages are the stretches the run had no server: from a lost
	// connection that would not reopen to the first that did.
	Outages []Span `json:"outages,omitempty"`
	// ServerLost marks a run that ended without a server; its rates are
	// over WindowSeconds, the part of the window up to the loss.
	ServerLost *ServerLost `json:"server_lost,omitempty"`
	// Stalls are the stretches in which no transaction ended while
	// virtual users waited in one.
	Stalls []Span `json:"stalls,omitempty"`
	// Late says the window closed late (rates are over its true length).
	Late *Late `json:"window_late,omitempty"`
	// Notes say in words what happened to the server: outages, its loss,
	// stalls.
	Notes []string `json:"notes,omitempty"`
	// Steady is whether the window's throughput had settled (steady.go);
	// absent in older documents, whose SteadyState computes it.
	Steady *Steady `json:"steady_state,omitempty"`
	// Sessions is a pooled run's sessions (--connections); absent in a
	// run with a session per virtual user, and in older documents.
	Sessions *Sessions `json:"sessions,omitempty"`
	// Placement is how the run's sessions went to the nodes of a target
	// of several; absent on one server, and in older documents.
	Placement *Placement `json:"placement,omitempty"`
	// Durability is the durability audit's finding, when the run had one.
	Durability *Durability `json:"durability,omitempty"`
	// ErrorRate is the window's errors held to the run's bound
	// (--max-error-rate); absent in older documents and merged ones.
	ErrorRate *ErrorRate `json:"error_rate,omitempty"`
	// Thresholds are the run's verdicts on the user's expectations
	// (--threshold, a sweep's thresholds), in their order; absent when
	// it was given none.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Telemetry is what the host and the database did during the run;
	// absent when the run was told not to record it.
	Telemetry *telemetry.Recording `json:"telemetry,omitempty"`
	// Part is a part's own document's section (--part); Parts a merged
	// document's (dbrig merge). A run of one process has neither.
	Part  *Part  `json:"part,omitempty"`
	Parts *Parts `json:"parts,omitempty"`
}

// MetricDef is what a metric is, as the workload declared it.
type MetricDef struct {
	Key            string `json:"key"`
	Label          string `json:"label"`
	Unit           string `json:"unit,omitempty"`
	HigherIsBetter bool   `json:"higher_is_better"`
}

// Metric is a metric's value in one run, on both sides.
type Metric struct {
	MetricDef
	// DB is the database's own figure, absent where it keeps none.
	DB *float64 `json:"db,omitempty"`
	// Client is absent where the client cannot count the figure.
	Client *float64 `json:"client,omitempty"`
	// Headline is the side whose figure stands for the metric, SideDB or
	// SideClient (headline.go); absent in older documents, and where
	// neither side measured it.
	Headline string `json:"headline,omitempty"`
}

// Metric returns the run's metric with key.
func (d *Document) Metric(key string) (Metric, bool) {
	for _, m := range d.Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// Mark is a reading of the database-side counters.
type Mark struct {
	At     float64          `json:"at"` // seconds since the run started
	Values map[string]int64 `json:"values"`
	// Server is the server the mark was read on (its address and port,
	// or its socket): across a failover the window's start and end are
	// read on two. Absent where the target cannot say, and in older
	// documents.
	Server string `json:"server,omitempty"`
}

// Reading is m as its workload read it, for a summary made again.
func (m Mark) Reading() workload.Mark {
	return workload.Mark{At: m.At, Values: m.Values, Server: m.Server}
}

// Point is one second of the series: completions per type, all phases.
type Point struct {
	T      float64 `json:"t"`
	Phase  string  `json:"phase"`
	Counts []int64 `json:"counts"`
	// Errors is the transactions that failed in the second, of all types.
	Errors int64 `json:"errors,omitempty"`
	// InDoubt is those whose commit was sent and never answered, of all
	// types, in neither its counts nor its errors.
	InDoubt int64 `json:"in_doubt,omitempty"`
	// Latency is the second's completed transactions' percentiles, all
	// types; absent when none completed, and in older documents.
	Latency *latency.Percentiles `json:"latency,omitempty"`
	// Wait is the percentiles of the second's waits for a session, which
	// its Latency includes: pooled runs only (--connections).
	Wait *latency.Percentiles `json:"wait,omitempty"`
	// Histogram and WaitHistogram are the second's latencies and, pooled,
	// waits, encoded as Tx.Histogram is: a part's own document only, so
	// that merging its parts gives the run's seconds exactly.
	Histogram     string `json:"histogram,omitempty"`
	WaitHistogram string `json:"wait_histogram,omitempty"`
}

// Span is a stretch of a run, on the series' clock.
type Span struct {
	At      float64 `json:"at"`
	Seconds float64 `json:"seconds"`
	// Answered, of a stall, says the server answered the run's probe
	// meanwhile: its transactions waited on something inside it.
	Answered bool `json:"server_answered,omitempty"`
}

// ServerLost is when a run's server went away for good, how long the run
// waited for it, and the window's errors.
type ServerLost struct {
	At      float64 `json:"at"`
	Seconds float64 `json:"seconds_without_server"`
	Errors  int64   `json:"errors"`
	// InDoubt is the window's transactions in doubt, whose commit the loss
	// left unanswered; absent when none were, and in older documents.
	InDoubt int64 `json:"in_doubt,omitempty"`
	// Window is the measured window's full length, of which the run's
	// rates count only WindowSeconds, up to the loss.
	Window float64 `json:"window_seconds"`
	// Silent says the server stopped answering (frozen, or behind a
	// half-open connection) rather than refused connections.
	Silent bool `json:"silent,omitempty"`
}

// Late is a window that closed a second or more after it was asked to,
// its end edge waiting for the transactions in hand: by how much, and
// how many virtual users were still in one when it stopped waiting.
type Late struct {
	Seconds float64 `json:"seconds"`
	Stuck   int     `json:"stuck_vus,omitempty"`
}

// Event is something that happened to the system under test during a run.
type Event struct {
	T    float64 `json:"t"` // seconds since the run started
	What string  `json:"what"`
}

// AuditItem is one check of the run against the workload's rules.
type AuditItem struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Result string  `json:"result"` // PASS, FAIL or SKIP
	Reason string  `json:"reason,omitempty"`
}

// Target names what was measured. URL never holds a password.
type Target struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
	URL     string `json:"url"`
}

// Server names the server as a person would: its kind and version, or,
// for a sweep over servers of several kinds ("postgres, mariadb"), the
// versions alone, since each names its own product.
func (t Target) Server() string {
	if strings.Contains(t.Kind, ", ") && t.Version != "" {
		return t.Version
	}
	return strings.TrimSpace(t.Kind + " " + t.Version)
}

// Tx is one transaction type's figures over the measured window.
type Tx struct {
	Name      string  `json:"name"`
	Count     int64   `json:"count"`
	PerMinute float64 `json:"per_minute"`
	Errors    int64   `json:"errors"`
	// InDoubt is the transactions whose commit was sent and never
	// answered, the connection lost with it: they may or may not have
	// committed, and count neither in Count nor in Errors; absent when
	// none were, and in older documents.
	InDoubt int64 `json:"in_doubt,omitempty"`
	Retries int64 `json:"retries"`
	// Aborts are the Errors that the target said were worth another try
	// after the last retry: conflicts the retries did not get past.
	Aborts int64 `json:"aborts,omitempty"`
	// RetryingMS is the time, inside the latencies, that the window's
	// transactions spent in attempts that failed and in the backoffs after
	// them, and BackoffMS that of the backoffs alone, in milliseconds.
	RetryingMS float64 `json:"retrying_ms,omitempty"`
	BackoffMS  float64 `json:"backoff_ms,omitempty"`
	// BusyMS is the whole time of the window's completed and failed
	// transactions, from their first attempts' starts, which RetryingMS
	// is a part of; absent in older documents.
	BusyMS      float64         `json:"busy_ms,omitempty"`
	ErrorSample string          `json:"error_sample,omitempty"`
	Latency     latency.Latency `json:"latency"`
	// Histogram is HdrHistogram's compressed base64 form, in microseconds.
	Histogram string `json:"histogram"`
}

// Run is what a run hands over to become a document.
type Run struct {
	Workload string
	Info     workload.Info
	Target   Target
	Config   map[string]any
	Result   *driver.Result
	Summary  workload.Summary
	TxNames  []string
	// TallyNames name Result.Tally's slots.
	TallyNames []string
	Marks      []workload.Mark
	Telemetry  *telemetry.Recording
	// Part is set in a part of a split run (--part): FromRun copies it
	// into the document with the seconds' histograms and a note.
	Part *Part
}

// Defs are the metric definitions of a workload's declaration.
func Defs(info workload.Info) []MetricDef {
	defs := make([]MetricDef, len(info.Metrics))
	for i, m := range info.Metrics {
		defs[i] = MetricDef{Key: m.Key, Label: m.Label, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter}
	}
	return defs
}

// FromRun assembles a document from a run.
func FromRun(run Run) (*Document, error) {
	r := run.Result
	sum := run.Summary
	d := &Document{
		SchemaVersion: SchemaVersion, Tool: "dbrig", Workload: run.Workload, Target: run.Target, Host: ReadHost(),
		Config: run.Config, StartedAt: r.Started.UTC(), WindowSeconds: r.WindowSeconds(),
		PrimaryMetric: run.Info.Primary, PrimaryTx: run.Info.PrimaryTx,
		Lines: sum.Lines, Extra: sum.Extra, SeriesTypes: run.TxNames, Interrupted: r.Interrupted,
		Counters: map[string]int64{}, Telemetry: run.Telemetry, ErrorClasses: r.ErrorClasses,
	}
	for _, e := range r.Events {
		d.Events = append(d.Events, Event(e))
	}
	d.health(r)
	d.actionOutages(r)
	if err := d.sessions(r.Pool); err != nil {
		return nil, err
	}
	for _, m := range run.Marks {
		d.Marks = append(d.Marks, Mark{At: m.At, Values: m.Values, Server: m.Server})
	}
	d.setMetrics(Defs(run.Info), sum.Values, true)
	for _, a := range sum.Audit {
		d.Audit = append(d.Audit, AuditItem(a))
	}
	for k, p := range r.Series {
		pt := Point{T: p.T, Phase: p.Phase, Counts: p.Counts, Errors: p.Errors, InDoubt: p.InDoubt, Latency: p.Latency}
		if r.Pool != nil && k < len(r.Pool.Waits) {
			pt.Wait = r.Pool.Waits[k]
		}
		d.Series = append(d.Series, pt)
	}
	d.Steady = steadyOf(d)
	if err := d.part(run); err != nil {
		return nil, err
	}
	for i, n := range run.TallyNames {
		d.Counters[n] = r.Tally[i]
	}
	if err := d.transactions(r.Tx); err != nil {
		return nil, err
	}
	return d, nil
}

// transactions records the window's figures of each transaction type,
// with its histogram and its rate over d's window.
func (d *Document) transactions(txs []driver.TxResult) error {
	for _, tx := range txs {
		enc, err := latency.Encode(tx.Hist)
		if err != nil {
			return err
		}
		pm := 0.0
		if d.WindowSeconds > 0 {
			pm = float64(tx.Count) * 60 / d.WindowSeconds
		}
		d.Transactions = append(d.Transactions, Tx{
			Name: tx.Name, Count: tx.Count, PerMinute: pm, Errors: tx.Errors, InDoubt: tx.InDoubt, Retries: tx.Retries,
			Aborts: tx.Aborts, RetryingMS: ms(tx.Retrying), BackoffMS: ms(tx.Backoff), BusyMS: ms(tx.Busy),
			ErrorSample: tx.ErrorSample, Latency: latency.Summarize(tx.Hist), Histogram: enc,
		})
	}
	return nil
}

// Write stores d at path, via a temporary file and a rename so a crash
// never leaves half a document.
func Write(path string, d *Document) error {
	return writeJSON(path, d)
}

func writeJSON(path string, d any) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return atomicfile.WriteFunc(path, 0o644, func(w io.Writer) error { return writeIndented(w, b) })
}

// encode is a document as Write and WriteSweep store it.
func encode(d any) ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = writeIndented(&out, b)
	return out.Bytes(), err
}

// Read loads a document, refusing one from a newer dbrig and upgrading
// one from an older.
func Read(path string) (*Document, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRun(path, b)
}

// ParseRun is Read of the document b, read from path. An upgraded document
// says schema 2, as it now is, so that written back it reads back the same.
func ParseRun(path string, b []byte) (*Document, error) {
	d, _, err := ParseRunVersion(path, b)
	return d, err
}

// ParseRunVersion is ParseRun, with the schema version the document was
// written in (the document it returns is in this dbrig's). It decodes
// the document once: most of what reading a large one costs.
func ParseRunVersion(path string, b []byte) (*Document, int, error) {
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		// A newer schema may not decode into this one: say so, not why.
		if v, verr := schemaVersion(b); verr == nil && v > SchemaVersion {
			return nil, 0, fmt.Errorf("%s: result schema version %d, this dbrig reads up to %d", path, v, SchemaVersion)
		}
		return nil, 0, fmt.Errorf("%s: not a dbrig result: %v", path, err)
	}
	version := d.SchemaVersion
	if version < 1 || version > SchemaVersion {
		return nil, 0, fmt.Errorf("%s: result schema version %d, this dbrig reads up to %d", path, version, SchemaVersion)
	}
	if version == 1 {
		if err := upgradeRun(b, &d); err != nil {
			return nil, 0, fmt.Errorf("%s: not a dbrig result: %v", path, err)
		}
		d.SchemaVersion = SchemaVersion
	}
	return &d, version, nil
}

func schemaVersion(b []byte) (int, error) {
	var v struct {
		SchemaVersion int `json:"schema_version"`
	}
	err := json.Unmarshal(b, &v)
	return v.SchemaVersion, err
}

// DefaultPath names a new document in dir by workload and start time.
func DefaultPath(dir, wl string, started time.Time) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%s.json", wl, started.UTC().Format(stampLayout)))
}

// stampLayout is a document's start time in its default name.
const stampLayout = "20060102T150405Z"

// ms is d in milliseconds, as a document gives times, and fromMS the
// duration a document's milliseconds were.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fromMS(m float64) time.Duration { return time.Duration(m * float64(time.Millisecond)) }

// RetryShare is the share, from 0 to 1, of the type's transactions'
// time that went to attempts that failed and to the backoffs after them
// (a latency is measured from the first attempt).
func (tx Tx) RetryShare() float64 {
	if tx.BusyMS <= 0 || tx.RetryingMS <= 0 {
		return 0
	}
	return min(tx.RetryingMS/tx.BusyMS, 1)
}

// Retried says whether any transaction of d's window was retried.
func Retried(d *Document) bool {
	for _, t := range d.Transactions {
		if t.Retries > 0 || t.Aborts > 0 {
			return true
		}
	}
	return false
}
