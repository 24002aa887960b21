package catalog

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
)

// Baseline is what a run is tested against: the N runs before it
// (last:N), the first N of the series (first:N), or runs named by ID.
type Baseline struct {
	Kind string // "last", "first" or "ids"
	N    int
	IDs  []string
}

// DefaultBaseline is last:5: the runs just before, which a slow drift
// moves with the series, where first:N would flag it.
var DefaultBaseline = Baseline{Kind: "last", N: 5}

// ParseBaseline reads last:N, first:N or ID[,ID...].
func ParseBaseline(s string) (Baseline, error) {
	kind, n, ok := strings.Cut(s, ":")
	if ok && (kind == "last" || kind == "first") {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 {
			return Baseline{}, exitcode.Userf("--baseline %s: want %s:N with N a whole number, 1 or more", s, kind)
		}
		return Baseline{Kind: kind, N: v}, nil
	}
	var ids []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 || ok {
		return Baseline{}, exitcode.Userf("--baseline %q: want last:N, first:N or run IDs separated by commas", s)
	}
	return Baseline{Kind: "ids", IDs: ids}, nil
}

func (b Baseline) String() string {
	if b.Kind == "ids" {
		return strings.Join(b.IDs, ",")
	}
	return fmt.Sprintf("%s:%d", b.Kind, b.N)
}

// Test is one run (or the last few, repetitions of one setup) tested
// against a baseline.
type Test struct {
	New, Base []Sample
	NewMean   float64 `json:"new_mean"`
	BaseMean  float64 `json:"baseline_mean"`
	// Change is (new - baseline)/baseline, with its 95% interval.
	Change float64 `json:"change"`
	Low    float64 `json:"change_low"`
	High   float64 `json:"change_high"`
	P      float64 `json:"p_value"`
	Method string  `json:"method"`
	// Verdict is Regression, Improvement or NoChange.
	Verdict string `json:"verdict"`
}

// The verdicts of a test.
const (
	Regression  = "regression"
	Improvement = "improvement"
	NoChange    = "no significant change"
)

// Regress tests the samples at series[at-k+1..at] (the run at index at
// and the k-1 before it, repetitions of one setup) against base, at
// significance alpha, for a metric whose higher values are better or not:
//   - both sides with two or more runs: Welch's t on their means;
//   - one run against two or more: how far it falls from the baseline's
//     mean in the baseline's run-to-run spread (a prediction interval);
//   - one against one: the two runs' own intervals (batch means over
//     their windows), which a run without one cannot be tested by.
func Regress(series []Sample, at, k int, base Baseline, higher bool, alpha float64) (*Test, error) {
	if at < 0 || at >= len(series) {
		return nil, exitcode.Userf("no run to test")
	}
	if k < 1 || at-k+1 < 0 {
		return nil, exitcode.Userf("--new %d: the series has only %d runs up to the one tested", k, at+1)
	}
	t := &Test{New: series[at-k+1 : at+1]}
	before := series[:at-k+1]
	switch base.Kind {
	case "last":
		t.Base = before[max(0, len(before)-base.N):]
	case "first":
		t.Base = before[:min(base.N, len(before))]
	default:
		for _, id := range base.IDs {
			i := slices.IndexFunc(series, func(s Sample) bool { return strings.HasPrefix(s.ID, strings.ToLower(id)) })
			if i < 0 {
				return nil, exitcode.Userf("--baseline: run %s is not in the series (its filter leaves it out, or it has no such metric)", id)
			}
			t.Base = append(t.Base, series[i])
		}
	}
	if len(t.Base) == 0 {
		return nil, exitcode.Userf("no baseline: the tested run is the first of its series; widen the filter, or name --baseline")
	}
	nv, bv := values(t.New), values(t.Base)
	t.NewMean, t.BaseMean = result.Mean(nv), result.Mean(bv)
	if t.BaseMean == 0 {
		return nil, exitcode.Userf("the baseline's mean is 0: no change can be told as a share of it")
	}
	diff, se, df, err := t.spread(nv, bv)
	if err != nil {
		return nil, err
	}
	t.Change = diff / t.BaseMean
	switch {
	case se == 0 && diff == 0:
		t.P = 1
	case se == 0:
		t.P = 0
	default:
		t.P = result.TwoSidedP(diff/se, df)
	}
	half := result.TQuantile975(df) * se / math.Abs(t.BaseMean)
	t.Low, t.High = t.Change-half, t.Change+half
	t.Verdict = NoChange
	if t.P < alpha {
		if (diff > 0) == higher {
			t.Verdict = Improvement
		} else {
			t.Verdict = Regression
		}
	}
	return t, nil
}

// spread is the difference of the means, its standard error and degrees
// of freedom, by the method the sizes of the two sides allow.
func (t *Test) spread(nv, bv []float64) (diff, se, df float64, err error) {
	diff = t.NewMean - t.BaseMean
	_, vn := meanVar(nv)
	_, vb := meanVar(bv)
	switch {
	case len(nv) >= 2 && len(bv) >= 2:
		a, b := vn/float64(len(nv)), vb/float64(len(bv))
		df = math.Inf(1)
		if a+b > 0 {
			df = (a + b) * (a + b) / (a*a/float64(len(nv)-1) + b*b/float64(len(bv)-1))
		}
		t.Method = fmt.Sprintf("Welch's t on %d runs against %d", len(nv), len(bv))
		return diff, math.Sqrt(a + b), df, nil
	case len(nv) == 1 && len(bv) >= 2:
		// The baseline's run-to-run spread holds each run's own noise
		// already: the new run's variance is taken to be the same.
		t.Method = fmt.Sprintf("one run against the spread of %d (a prediction interval)", len(bv))
		return diff, math.Sqrt(vb/float64(len(bv)) + vb), float64(len(bv) - 1), nil
	case len(bv) == 1 && len(nv) > 1:
		return 0, 0, 0, exitcode.Userf("--new %d against a baseline of one run: give the baseline two or more (--baseline last:3)", len(nv))
	}
	// One against one: their own intervals alone.
	vn, vb = ownVar(t.New[0]), ownVar(t.Base[0])
	if math.IsNaN(vn) || math.IsNaN(vb) {
		return 0, 0, 0, exitcode.Userf("one run against one cannot be tested without both runs' own intervals, which a run of a few seconds, or a document of another tool, lacks: use --baseline last:3 or more")
	}
	t.Method = "one run against one, by their own intervals"
	return diff, math.Sqrt(vn + vb), math.Inf(1), nil
}

// ownVar is the variance of a run's value that its own interval gives
// (a 95% interval's half-width over 1.96, squared), NaN without one.
func ownVar(s Sample) float64 {
	if s.Low == nil || s.High == nil {
		return math.NaN()
	}
	half := (*s.High - *s.Low) / 2 / 1.959964
	return half * half
}

func values(s []Sample) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = v.Value
	}
	return out
}

func meanVar(xs []float64) (float64, float64) {
	st := result.Summarize(xs)
	if st == nil {
		return 0, 0
	}
	return st.Mean, st.StdDev * st.StdDev
}

// Check is a regression check: the test of one run against its
// baseline, and the change points of the whole series it is in.
type Check struct {
	Metric MetricInfo `json:"metric"`
	Test   *Test      `json:"test"`
	Series Series     `json:"series"`
}

// CheckRun tests the run id names ("" for the newest f picks), with the
// k-1 runs before it as its repetitions, against base, over metric's
// history in the entries f picks.
func (c *Catalog) CheckRun(ctx context.Context, metric string, f Filter, id string, k int, base Baseline, alpha float64) (*Check, error) {
	samples, info, err := c.History(ctx, metric, f, "")
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, c.noMetric(ctx, metric, f)
	}
	at := len(samples) - 1
	if id != "" {
		full, err := c.resolve(ctx, id)
		if err != nil {
			return nil, err
		}
		if at = slices.IndexFunc(samples, func(s Sample) bool { return s.ID == full }); at < 0 {
			return nil, exitcode.Userf("run %s is not among the runs the filter picks, or has no metric %q", ShortID(full), metric)
		}
	}
	t, err := Regress(samples, at, k, base, info.Higher, alpha)
	if err != nil {
		return nil, err
	}
	changes, err := Changes(samples)
	if err != nil {
		return nil, err
	}
	return &Check{Metric: *info, Test: t, Series: Series{Samples: samples, Changes: changes}}, nil
}
