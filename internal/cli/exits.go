package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/spf13/pflag"
)

// errorsLong tells what --max-error-rate does.
const errorsLong = `

A run whose errors (transactions failed after their retries) pass
--max-error-rate, 1% of the measured window's transactions by default, fails:
the summary's first line names its error rate, and the exit code is 1. A
window in which no transaction ended, completed or failed, passes.`

// errorBound is --max-error-rate: the share of the window's transactions,
// in %, that may fail before the run does.
type errorBound float64

func (b *errorBound) String() string { return strconv.FormatFloat(float64(*b), 'g', -1, 64) + "%" }

func (b *errorBound) Type() string { return "percent" }

func (b *errorBound) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
		return fmt.Errorf("want a share of the transactions from 0%% to 100%%, such as 1%% or 0.1%%, got %q", s)
	}
	*b = errorBound(v)
	return nil
}

// addErrorBoundFlag adds --max-error-rate, at its default.
func addErrorBoundFlag(fs *pflag.FlagSet, b *errorBound, of string) {
	*b = errorBound(result.DefaultMaxErrorPct)
	fs.Var(b, "max-error-rate", "the share of the measured window's transactions that may fail before "+of+" fails, exit code 1 (100% never fails)")
}

// outcome is how a kept run ends: a failure where it failed (its server
// lost, its errors past the bound, a change the database acknowledged
// gone, a threshold missed), else an interruption where a signal cut it
// short. A run that failed fails, cut short or not.
func outcome(doc *result.Document) error {
	switch {
	case doc.ServerLost != nil, doc.ErrorRate != nil && doc.ErrorRate.Exceeded, result.Missed(doc.Thresholds) > 0:
		return &failure{}
	case doc.Durability != nil && durabilityVerdict(doc.Durability) != nil:
		return &failure{}
	case doc.Interrupted:
		return &interrupted{}
	}
	return nil
}
