package result

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/workload"
)

// Threshold is a user's expectation of a run's measured window, which
// the run meets or misses: k6's thresholds (http_req_duration:
// p(95)<200), written as dbrig names its figures:
//
//	METRIC>50000        a metric the workload declares, in its own unit: the figure that stands for it (Metric.Value)
//	METRIC.client>50000 the client's figure of it; METRIC.db the database's
//	errors<0.1%         the window's failed transactions: a share of all, or a count (errors<10)
//	in_doubt<1          the window's transactions in doubt (their commit never answered): a count or a share
//	TYPE.p95<5ms        a transaction type's latency: p50 p90 p95 p99 p99.9 max avg, in us, ms or s
//	TYPE.errors<1%      the type's own failures; TYPE.in_doubt its own in doubt
//	lost_acks<1         the changes the database acknowledged that the durability audit found missing, a count
//
// The operators are <, <=, > and >=.
type Threshold struct {
	// Expr is the threshold as written, without spaces.
	Expr string
	// Tx is the transaction type; "" for a metric or the run's errors.
	Tx string
	// What is the metric's key, ErrorsKey, InDoubtKey, LostAcksKey, or a
	// latency statistic.
	What string
	// Side is the side of a metric it judges, SideClient or SideDB; ""
	// judges the side that stands for it (Metric.Side).
	Side  string
	Op    string
	Limit float64
	// Unit is the limit's: a latency's us, ms or s; "%" or "" (a count)
	// for errors; "" for a metric, in the metric's own unit.
	Unit string
}

// The names of thresholds on what a run's transactions came to, beside
// its metrics: failed transactions (ErrorsKey), those in doubt
// (InDoubtKey), and the acknowledged changes the durability audit found
// missing (LostAcksKey), which is judged once the audit has run, after
// the window.
const (
	ErrorsKey   = "errors"
	InDoubtKey  = "in_doubt"
	LostAcksKey = "lost_acks"
)

// counted says key counts transactions, as a share of all or a count.
func counted(key string) bool { return key == ErrorsKey || key == InDoubtKey }

var (
	thresholdOps = []string{"<=", ">=", "<", ">"}
	// LatencyStats are the statistics of a transaction type's latency a
	// threshold can name.
	LatencyStats = []string{"p50", "p90", "p95", "p99", "p99.9", "max", "avg"}
	// latencyUnits are each unit's milliseconds.
	latencyUnits = map[string]float64{"us": 0.001, "µs": 0.001, "ms": 1, "s": 1000}
	limitRe      = regexp.MustCompile(`^(\d+(?:\.\d*)?|\.\d+)(.*)$`)
)

// ParseThresholds reads exprs against what a run declares: its metrics
// (info) and its transaction types (txs). A bad one is a one-line usage
// error naming what is known.
func ParseThresholds(exprs []string, info workload.Info, txs []string) ([]Threshold, error) {
	out := make([]Threshold, 0, len(exprs))
	for _, e := range exprs {
		t, err := ParseThreshold(e, info, txs)
		if err != nil {
			return nil, exitcode.Userf("threshold %q: %v", e, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// ParseThreshold reads one threshold (see Threshold).
func ParseThreshold(expr string, info workload.Info, txs []string) (Threshold, error) {
	s := strings.Join(strings.Fields(expr), "")
	i := strings.IndexAny(s, "<>=!")
	if i <= 0 {
		return Threshold{}, fmt.Errorf("want NAME<VALUE or NAME>VALUE, such as %s", ThresholdExample(info))
	}
	name, rest := s[:i], s[i:]
	k := slices.IndexFunc(thresholdOps, func(op string) bool { return strings.HasPrefix(rest, op) })
	if k < 0 || strings.IndexAny(rest[len(thresholdOps[k]):], "<>=!") == 0 {
		return Threshold{}, fmt.Errorf("unknown operator in %q (known: <, <=, >, >=)", rest)
	}
	t := Threshold{Expr: s, Op: thresholdOps[k]}
	metric, side := splitSide(name)
	if _, ok := info.Metric(name); ok || counted(name) || name == LostAcksKey {
		t.What = name
	} else if _, ok := info.Metric(metric); ok {
		t.What, t.Side = metric, side
	} else if err := t.splitTx(name, info, txs); err != nil {
		return Threshold{}, err
	}
	value := rest[len(t.Op):]
	m := limitRe.FindStringSubmatch(value)
	if m == nil {
		return Threshold{}, fmt.Errorf("want a number after %s, got %q", t.Op, value)
	}
	t.Limit, _ = strconv.ParseFloat(m[1], 64)
	t.Unit = m[2]
	return t, t.checkUnit()
}

// splitSide reads name as METRIC.SIDE; "" and "" where it names no side.
func splitSide(name string) (metric, side string) {
	for _, s := range []string{SideClient, SideDB} {
		if m, ok := strings.CutSuffix(name, "."+s); ok {
			return m, s
		}
	}
	return "", ""
}

// splitTx reads name, TX.STAT, into t's transaction type and statistic,
// each of them known; txs nil takes any type.
func (t *Threshold) splitTx(name string, info workload.Info, txs []string) error {
	tx, stat, dotted := strings.Cut(name, ".")
	switch {
	case !dotted:
		return fmt.Errorf("unknown metric %q (known: %s, %s, %s, %s; a metric's one side, such as %s.client or %s.db; or TRANSACTION.STAT, such as %s)",
			name, strings.Join(metricKeys(info), ", "), ErrorsKey, InDoubtKey, LostAcksKey, info.Primary, info.Primary, ThresholdExample(info))
	case !slices.Contains(txs, tx) && slices.Contains(metricKeys(info), tx):
		return fmt.Errorf("unknown side %q of %s (known: %s, %s)", stat, tx, SideClient, SideDB)
	case txs != nil && !slices.Contains(txs, tx):
		return fmt.Errorf("unknown transaction %q (known: %s)", tx, strings.Join(txs, ", "))
	case !counted(stat) && !slices.Contains(LatencyStats, stat):
		return fmt.Errorf("unknown statistic %q of %s (known: %s, %s, %s)", stat, tx, strings.Join(LatencyStats, ", "), ErrorsKey, InDoubtKey)
	}
	t.Tx, t.What = tx, stat
	return nil
}

// checkUnit checks the limit's unit against what it limits.
func (t *Threshold) checkUnit() error {
	what := strings.ReplaceAll(t.What, "_", " ")
	switch {
	case counted(t.What) && t.Unit == "%":
		if t.Limit > 100 {
			return fmt.Errorf("a share of %s is at most 100%%, got %g%%", what, t.Limit)
		}
	case counted(t.What) && t.Unit == "":
		if t.Limit != math.Trunc(t.Limit) {
			return fmt.Errorf("want a share (0.1%%) or a whole count of %s, got %g", what, t.Limit)
		}
	case counted(t.What):
		return fmt.Errorf("unknown unit %q for %s (known: %% for a share, none for a count)", t.Unit, what)
	case t.What == LostAcksKey && (t.Unit != "" || t.Limit != math.Trunc(t.Limit)):
		return fmt.Errorf("lost_acks is a whole count of the changes acknowledged and found missing, such as lost_acks<1; got %g%s", t.Limit, t.Unit)
	case t.Tx != "":
		if _, ok := latencyUnits[t.Unit]; !ok {
			return fmt.Errorf("unknown unit %q for a latency (known: us, ms, s), such as %s.%s<5ms", t.Unit, t.Tx, t.What)
		}
	case t.Unit != "":
		return fmt.Errorf("%s is compared in its own unit: give a plain number, without %q", t.What, t.Unit)
	}
	return nil
}

func metricKeys(info workload.Info) []string {
	keys := make([]string, len(info.Metrics))
	for i, m := range info.Metrics {
		keys[i] = m.Key
	}
	return keys
}

// ThresholdExample is a latency threshold on the primary transaction
// of a run that declares info.
func ThresholdExample(info workload.Info) string {
	tx := info.PrimaryTx
	if tx == "" {
		tx = "TRANSACTION"
	}
	return tx + ".p95<5ms"
}

// ThresholdResult is a threshold's verdict on a run, with what was
// measured in the limit's unit.
type ThresholdResult struct {
	Threshold string `json:"threshold"`
	// Side is the side of a metric it judged, SideClient or SideDB;
	// absent for any other threshold, and in older documents.
	Side string `json:"side,omitempty"`
	// Measured is absent where the window had nothing to measure; Note
	// then says why.
	Measured *float64 `json:"measured,omitempty"`
	Unit     string   `json:"unit,omitempty"`
	Met      bool     `json:"met"`
	Note     string   `json:"note,omitempty"`
	// Unjudged marks a threshold the window was not held to at all (an
	// interrupted run's, see Unjudged): neither met nor missed, and Note
	// says why.
	Unjudged bool `json:"unjudged,omitempty"`
}

// Evaluate is each threshold's verdict on d's window.
func Evaluate(ts []Threshold, d *Document) []ThresholdResult {
	var out []ThresholdResult
	for _, t := range ts {
		out = append(out, t.Evaluate(d))
	}
	return out
}

// Unjudged is ts as a run records them when it did not hold its window
// to them: an interrupted window's figures are not the run's, and a met
// threshold on them would vouch for nothing. why is the note each gets.
func Unjudged(ts []Threshold, why string) []ThresholdResult {
	var out []ThresholdResult
	for _, t := range ts {
		out = append(out, ThresholdResult{Threshold: t.Expr, Unit: t.Unit, Note: why, Unjudged: true})
	}
	return out
}

// Missed counts the thresholds a run missed; one not judged is not missed.
func Missed(rs []ThresholdResult) int {
	n := 0
	for _, r := range rs {
		if !r.Met && !r.Unjudged {
			n++
		}
	}
	return n
}

// Evaluate is t's verdict on d's window. A figure the window could not
// measure misses: nothing shows the expectation met.
func (t Threshold) Evaluate(d *Document) ThresholdResult {
	r := ThresholdResult{Threshold: t.Expr, Unit: t.Unit}
	if t.What == LostAcksKey && d.Durability == nil {
		r.Unjudged, r.Note = true, "not judged: the run has no durability audit's finding (--audit-durability, and a server there after the run)"
		return r
	}
	v, note := t.measure(d, &r.Side)
	if math.IsNaN(v) {
		r.Note = note
		return r
	}
	r.Measured = &v
	switch t.Op {
	case "<":
		r.Met = v < t.Limit
	case "<=":
		r.Met = v <= t.Limit
	case ">":
		r.Met = v > t.Limit
	case ">=":
		r.Met = v >= t.Limit
	}
	return r
}

// measure is t's figure in d, in t's unit; NaN and why where there is
// none. A metric's side is set in *side.
func (t Threshold) measure(d *Document, side *string) (float64, string) {
	if t.What == LostAcksKey {
		return float64(d.Durability.Missing), ""
	}
	if t.Tx == "" && !counted(t.What) {
		m, ok := d.Metric(t.What)
		*side = cmp.Or(t.Side, m.Side())
		if !ok || math.IsNaN(m.On(*side)) {
			return math.NaN(), "not measured"
		}
		return m.On(*side), ""
	}
	var ended, n int64
	var tx *Tx
	for i, x := range d.Transactions {
		if t.Tx == "" || x.Name == t.Tx {
			ended, tx = ended+x.Count+x.Errors+x.InDoubt, &d.Transactions[i]
			if t.What == InDoubtKey {
				n += x.InDoubt
			} else {
				n += x.Errors
			}
		}
	}
	switch {
	case tx == nil && t.Tx != "":
		return math.NaN(), "no " + t.Tx + " in the result"
	case counted(t.What) && t.Unit == "%":
		if ended == 0 {
			return math.NaN(), "no transactions in the window"
		}
		return float64(n) * 100 / float64(ended), ""
	case counted(t.What):
		return float64(n), ""
	}
	return t.latency(tx)
}

// latency is tx's statistic t.What in t's unit, read from its histogram
// as latency.Summarize reads the summary's.
func (t Threshold) latency(tx *Tx) (float64, string) {
	h, err := latency.Decode(tx.Histogram)
	if err != nil || h.TotalCount() == 0 {
		return math.NaN(), "no " + t.Tx + " completed in the window"
	}
	var us float64
	switch t.What {
	case "avg":
		us = h.Mean()
	case "max":
		us = float64(h.Max())
	default:
		q, _ := strconv.ParseFloat(strings.TrimPrefix(t.What, "p"), 64)
		us = float64(h.ValueAtQuantile(q))
	}
	return us / 1000 / latencyUnits[t.Unit], ""
}
