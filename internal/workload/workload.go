// Package workload holds the registry of workloads, the interfaces they
// implement and what they share (generators, decks, SQL files, loading).
//
// A workload implements the small Workload interface and, where it has
// them, the optional Builder, Dropper, Checker and the estimators; an opened Run
// may implement Batch and Preparer. Commands ask for what they need, so a
// workload without a schema (the CPU test) simply has no Builder.
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/spf13/pflag"
)

// Workload is one benchmark. A fresh value is made per command, so flags
// bind to its fields.
type Workload interface {
	Name() string
	// Info declares the workload's metrics and its primary transaction.
	Info() Info
	// RunFlags adds the workload's own run options.
	RunFlags(fs *pflag.FlagSet)
	// Open validates the schema and the run options and returns what the
	// driver runs. A missing schema is ErrNoSchema.
	Open(ctx context.Context, t dbtarget.Target) (Run, error)
}

// Builder is a workload with a schema to create and load.
type Builder interface {
	// BuildFlags adds the build's own options.
	BuildFlags(fs *pflag.FlagSet)
	// Build creates and loads the schema, reporting progress.
	Build(ctx context.Context, t dbtarget.Target, opt BuildOptions) (BuildSummary, error)
}

// Dropper is a workload that can remove everything its build made.
type Dropper interface {
	Drop(ctx context.Context, t dbtarget.Target) error
}

// Checker is a workload with consistency conditions.
type Checker interface {
	// Check writes a line per condition; ok is false if any failed.
	Check(ctx context.Context, t dbtarget.Target, out io.Writer) (ok bool, err error)
}

// BuildEstimator is a Builder that can tell how long a build of the
// options bound to its flags takes, for plans and time-left lines.
type BuildEstimator interface {
	BuildTime() time.Duration
}

// RunEstimator is a workload of a fixed amount of work (Info.FixedWork)
// that can tell how long a run of the options bound to its flags takes; a
// timed run lasts as long as its window.
type RunEstimator interface {
	RunTime() time.Duration
}

// RunChecker is a workload whose run options can be checked without a
// database: a command refuses bad ones before it opens a target, which on
// an embedded one would create a database file for nothing.
type RunChecker interface {
	CheckRun() error
}

// Exampler is a workload with its own examples for the run command's
// help, where the generic ones (a timed run's flags) would mislead.
type Exampler interface {
	Examples() []string
}

// Info is what a workload declares about its results.
type Info struct {
	// Metrics are the headline figures, in the order they are shown.
	Metrics []Metric
	// Primary is the key of the metric that stands for a run: the one a
	// sweep's statistics, gains and charts are about first.
	Primary string
	// PrimaryTx names the transaction type whose latency stands for a run.
	PrimaryTx string
	// FixedWork marks a workload whose runs are a fixed amount of work
	// (see Batch) rather than a timed window, so the runner's timed
	// parameters (vus, rampup, duration) do not apply to it.
	FixedWork bool
}

// Metric is one headline figure.
type Metric struct {
	Key            string // stable, for documents and specs: "loops_per_minute"
	Label          string // for people: "loops per minute"
	Unit           string
	HigherIsBetter bool
}

// Metric returns the declared metric with key.
func (i Info) Metric(key string) (Metric, bool) {
	k := slices.IndexFunc(i.Metrics, func(m Metric) bool { return m.Key == key })
	if k < 0 {
		return Metric{}, false
	}
	return i.Metrics[k], true
}

// BuildOptions are the options every workload's build takes.
type BuildOptions struct {
	// Force drops an existing schema first instead of refusing.
	Force bool
	// Progress is called now and then with a line of progress.
	Progress func(done, total int64, what string)
}

// BuildSummary is the build's one-line result.
type BuildSummary struct {
	Rows    int64
	Bytes   int64
	Seconds float64
	// Notes are lines for people: what the build verified, say.
	Notes []string
	// Phases are the build's steps in order, each timed.
	Phases []Phase
}

// Phase is one step of a build and the wall-clock seconds it took.
type Phase struct {
	Name    string
	Seconds float64
}

// Run is an opened workload, ready for the driver.
type Run interface {
	driver.Workload
	// Config is every resolved run parameter, for the result document.
	Config() map[string]any
	// Mark reads the database-side counters at an edge of the measured window.
	Mark(ctx context.Context) (Mark, error)
	// Summarize turns the driver's result and the two marks into metrics.
	Summarize(r *driver.Result, start, end Mark) Summary
	// Progress is the workload's headline for one second's completions.
	Progress(counts []int64) string
	Close() error
}

// Seeded is a Run whose inputs come from one seed: its virtual users'
// streams and any constants the run draws. The parts of a run split over
// several processes must share it, so every part but the first takes the
// first's.
type Seeded interface {
	Seed() uint64
	// Reseed makes every stream and run constant from seed, as Open would
	// have made them; it is called before any virtual user opens.
	Reseed(seed uint64)
}

// Resummarizer is a Workload whose summary can be made again from a
// document's figures, without a target: the merge of a split run's parts
// recomputes the run's metrics from the parts' figures added up. It must
// go through the same code as the run's own Summarize, so that a merged
// document cannot drift from a single one.
type Resummarizer interface {
	Resummarize(f Figures) (Summary, error)
}

// Figures are what a run's summary is made from, read back from a
// document (or merged from several).
type Figures struct {
	// Config is the document's config, as read back from JSON: numbers are
	// float64, maps map[string]any (see ReadConfig).
	Config map[string]any
	// Result holds Tx (Name, Count, Errors, Retries, Hist), WindowStart
	// and WindowEnd, and Pool; Resummarize fills its Tally from Counters.
	Result *driver.Result
	// Counters are the run's tallies by name, as a document holds them:
	// only the run knows their order.
	Counters map[string]int64
	// Start and End are the marker's marks; zero Marks when none.
	Start, End Mark
	// Terminals and Sessions are the whole run's terminals (VUs) and
	// sessions (Connections, or VUs without a pool).
	Terminals, Sessions int
}

// Resummarize is the end of a Resummarizer: r is a run rebuilt from f's
// config, read by c. It refuses c's first missing or mistyped key and
// figures that do not fit r's transactions and tallies, and summarizes f
// with r's own Summarize.
func Resummarize(r Run, f Figures, c *ConfigReader) (Summary, error) {
	if err := c.Err(); err != nil {
		return Summary{}, err
	}
	res := f.Result
	if res == nil {
		return Summary{}, errors.New("no figures to summarize")
	}
	names := make([]string, len(res.Tx))
	for i, tx := range res.Tx {
		names[i] = tx.Name
	}
	if want := r.TxNames(); !slices.Equal(names, want) {
		return Summary{}, fmt.Errorf("transactions %v, want %v", names, want)
	}
	tallied := *res
	tallied.Tally = make(driver.Tally, 0, len(f.Counters))
	for _, n := range r.TallyNames() {
		v, ok := f.Counters[n]
		if !ok {
			return Summary{}, fmt.Errorf("no counter %q among %v", n, slices.Sorted(maps.Keys(f.Counters)))
		}
		tallied.Tally = append(tallied.Tally, v)
	}
	return r.Summarize(&tallied, f.Start, f.End), nil
}

// Rater is a Run whose metrics can be read live: it turns one second's
// completions per transaction type into its metrics' values, by key, for
// a live view of a run (the progress line, a metrics endpoint). They are
// rough: the summary's figures come from the whole window.
type Rater interface {
	Rates(counts []int64) map[string]float64
}

// Batch is a Run of a fixed amount of work: VUs virtual users each run
// Each transactions, all starting at once.
type Batch interface {
	Batch() (vus, each int)
}

// Preparer is a Run with work to do before the driver starts, outside the
// measured window (a reference measurement, say).
type Preparer interface {
	Prepare(ctx context.Context) error
}

// VULimiter is a Run that takes only so many virtual users, which the
// runner asks before anything starts.
type VULimiter interface {
	// CheckVUs refuses, in one line, a run of vus virtual users.
	CheckVUs(vus int) error
}

// CheckVUs asks r, if it limits its virtual users, about a run of vus.
func CheckVUs(r Run, vus int) error {
	if l, ok := r.(VULimiter); ok {
		return l.CheckVUs(vus)
	}
	return nil
}

// Mark is a reading of database-side counters; what they are is the
// workload's business.
type Mark struct {
	At     float64 // seconds since the run started, on the driver's clock
	Values map[string]int64
	// Lost says the mark was never read: the run's server was lost.
	Lost bool
	// Unread says the mark was never read, with the server still there:
	// the run was stopped first, or the read failed.
	Unread bool
	// Shared says its transaction counter (Xacts) counts the transactions
	// of other workloads run beside this one in the window (--with).
	Shared bool
	// Server is the server the mark was read on, as its target locates it
	// (dbtarget.Located); "" where the target cannot say.
	Server string
}

// Summary is what a workload makes of a run: its metrics on both sides,
// lines for people and checks on the mix.
type Summary struct {
	// Values holds a value for every declared metric, by key.
	Values map[string]Value
	// Lines are extra lines for the text summary (agreement, efficiency).
	Lines []string
	Extra map[string]any
	Audit []AuditItem
}

// Value is one metric measured on both sides.
type Value struct {
	// DB is the database's own figure; nil where it keeps none.
	DB *float64
	// Client is the client's own count; nil where the client cannot see
	// it (a cache miss happens inside the database).
	Client *float64
	// Tolerance, where both sides count the same thing, is how far apart
	// they may fall and still agree, as a share of the database's figure
	// (Tolerance, as a rule). Beyond it the client's figure stands for the
	// metric: the database's counters count every client of the database,
	// the client only this run's work. It is 0 where the sides count
	// different things (a loop timed by the database's clock and by the
	// client's), which are never held to each other.
	Tolerance float64
}

// Tolerance is how far apart a rate's two sides may fall and still
// agree: 1% of the database's figure.
const Tolerance = 0.01

// Disagree says v's two sides count the same thing and fall further apart
// than its Tolerance: the client's figure then stands for the metric.
func (v Value) Disagree() bool {
	if v.Tolerance <= 0 || v.DB == nil || v.Client == nil {
		return false
	}
	return math.Abs(*v.Client-*v.DB) > v.Tolerance*math.Abs(*v.DB)
}

// Known is a figure that was measured, for a Value's sides.
func Known(v float64) *float64 { return &v }

// AuditItem is one check of the run against the workload's rules.
type AuditItem struct {
	Name   string
	Value  float64
	Low    float64
	High   float64
	Result string // PASS, FAIL or SKIP
	Reason string
}

// ErrNoSchema means the target has no schema for the workload.
var ErrNoSchema = errors.New("no schema")

var registry = map[string]func() Workload{}

// Register adds a workload under its name. Called from the workload
// packages' init; a duplicate name or an inconsistent Info is a bug, so
// it panics.
func Register(name string, make func() Workload) {
	if _, dup := registry[name]; dup {
		panic("workload " + name + " registered twice")
	}
	if err := check(make()); err != nil {
		panic(fmt.Sprintf("workload %s: %v", name, err))
	}
	registry[name] = make
}

func check(w Workload) error {
	info := w.Info()
	if len(info.Metrics) == 0 {
		return errors.New("declares no metrics")
	}
	seen := map[string]bool{}
	for _, m := range info.Metrics {
		if m.Key == "" || seen[m.Key] {
			return fmt.Errorf("metric key %q is empty or repeated", m.Key)
		}
		seen[m.Key] = true
	}
	if !seen[info.Primary] {
		return fmt.Errorf("primary metric %q is not among its metrics", info.Primary)
	}
	return nil
}

// New returns a fresh workload by name.
func New(name string) (Workload, bool) {
	m, ok := registry[name]
	if !ok {
		return nil, false
	}
	return m(), true
}

// Names lists the registered workloads.
func Names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Affine is a Run whose virtual users have a key of their own that can
// keep their sessions on one node of a target of several (a cluster whose
// nodes all take writes): VUs that write the same rows, on one node,
// contend in its locks, where on two they conflict at commit and one is
// aborted.
type Affine interface {
	// Affinity names the key (tproc-c: "warehouse") and gives VU id's.
	Affinity() (name string, key func(id int) int)
}
