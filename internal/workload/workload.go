// Package workload holds the registry of workloads and what they share.
package workload

import (
	"context"
	"errors"
	"io"
	"sort"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/target"
	"github.com/spf13/pflag"
)

// Workload is one benchmark: its schema, its loader, its transactions and
// its checks. A fresh value is made per command, so flags bind to its fields.
type Workload interface {
	Name() string
	// BuildFlags and RunFlags add the workload's own options.
	BuildFlags(fs *pflag.FlagSet)
	RunFlags(fs *pflag.FlagSet)
	// Build creates and loads the schema, reporting progress to log.
	Build(ctx context.Context, t target.Target, opt BuildOptions) (BuildSummary, error)
	// Drop removes everything Build made.
	Drop(ctx context.Context, t target.Target) error
	// Check runs the consistency conditions, writing a line per condition;
	// ok is false if any failed.
	Check(ctx context.Context, t target.Target, out io.Writer) (ok bool, err error)
	// Open validates the schema and the run options and returns what the
	// driver runs. A missing schema is ErrNoSchema.
	Open(ctx context.Context, t target.Target) (Run, error)
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

// Mark is a reading of database-side counters; what they are is the
// workload's business.
type Mark struct {
	At     float64          `json:"at"` // seconds since the run started
	Values map[string]int64 `json:"values"`
}

// Summary is what a workload makes of a run: headline rates on both sides,
// and checks on the mix.
type Summary struct {
	Headline   string   `json:"-"`
	NOPM       *float64 `json:"nopm,omitempty"`
	TPM        *float64 `json:"tpm,omitempty"`
	NOPMClient float64  `json:"nopm_client"`
	TPMClient  float64  `json:"tpm_client"`
	// Lines are extra lines for the text summary (agreement, efficiency).
	Lines []string       `json:"summary_lines,omitempty"`
	Extra map[string]any `json:"extra,omitempty"`
	Audit []AuditItem    `json:"audit"`
}

// AuditItem is one mix check.
type AuditItem struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Result string  `json:"result"` // PASS, FAIL or SKIP
	Reason string  `json:"reason,omitempty"`
}

// ErrNoSchema means the target has no schema for the workload.
var ErrNoSchema = errors.New("no schema")

var registry = map[string]func() Workload{}

// Register adds a workload under its name. Called from the workload packages' init.
func Register(name string, make func() Workload) { registry[name] = make }

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
