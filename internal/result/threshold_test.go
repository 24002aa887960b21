package result

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/workload"
)

var thInfo = workload.Info{
	Metrics:   []workload.Metric{{Key: "nopm", HigherIsBetter: true}, {Key: "tpm", HigherIsBetter: true}, {Key: "cache_ratio"}},
	Primary:   "nopm",
	PrimaryTx: "new_order",
}

var thTxs = []string{"new_order", "payment", "other:report"}

func TestParseThresholdRefusesInOneLine(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"nopn>5", `unknown metric "nopn" (known: nopm, tpm, cache_ratio, errors, in_doubt, lost_acks; a metric's one side, such as nopm.client or nopm.db; or TRANSACTION.STAT, such as new_order.p95<5ms)`},
		{"neworder.p95<5ms", `unknown transaction "neworder" (known: new_order, payment, other:report)`},
		{"new_order.p96<5ms", `unknown statistic "p96" of new_order (known: p50, p90, p95, p99, p99.9, max, avg, errors, in_doubt)`},
		{"new_order.p95=5ms", `unknown operator in "=5ms" (known: <, <=, >, >=)`},
		{"new_order.p95<<5ms", `unknown operator in "<<5ms"`},
		{"nopm=>5", `unknown operator`},
		{"nopm", `want NAME<VALUE or NAME>VALUE, such as new_order.p95<5ms`},
		{"new_order.p95<5", `unknown unit "" for a latency (known: us, ms, s)`},
		{"new_order.p95<5min", `unknown unit "min" for a latency`},
		{"new_order.p95<-5ms", `want a number after <, got "-5ms"`},
		{"nopm>fast", `want a number after >, got "fast"`},
		{"nopn>fast", `unknown metric "nopn"`},
		{"nopm.server>5", `unknown side "server" of nopm (known: client, db)`},
		{"nopn.client>5", `unknown transaction "nopn"`},
		{"nopm>50k", `nopm is compared in its own unit: give a plain number, without "k"`},
		{"errors<0.1", `want a share (0.1%) or a whole count of errors, got 0.1`},
		{"errors<101%", `a share of errors is at most 100%`},
		{"errors<1ms", `unknown unit "ms" for errors`},
		{"in_doubt<0.5", `want a share (0.1%) or a whole count of in doubt, got 0.5`},
		{"payment.in_doubt<1s", `unknown unit "s" for in doubt`},
		{"lost_acks<1%", `lost_acks is a whole count of the changes acknowledged and found missing, such as lost_acks<1; got 1%`},
		{"lost_acks<0.5", `lost_acks is a whole count`},
	} {
		_, err := ParseThresholds([]string{c.expr}, thInfo, thTxs)
		var ue *exitcode.UserError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want a one-line usage error with %q", c.expr, err, c.want)
		}
	}
}

func TestParseThresholdReads(t *testing.T) {
	for _, c := range []struct {
		expr string
		want Threshold
	}{
		{"nopm > 50000", Threshold{Expr: "nopm>50000", What: "nopm", Op: ">", Limit: 50000}},
		{"errors<0.1%", Threshold{Expr: "errors<0.1%", What: "errors", Op: "<", Limit: 0.1, Unit: "%"}},
		{"errors<=10", Threshold{Expr: "errors<=10", What: "errors", Op: "<=", Limit: 10}},
		{"new_order.p99.9<1.5s", Threshold{Expr: "new_order.p99.9<1.5s", Tx: "new_order", What: "p99.9", Op: "<", Limit: 1.5, Unit: "s"}},
		{"other:report.avg>=.5ms", Threshold{Expr: "other:report.avg>=.5ms", Tx: "other:report", What: "avg", Op: ">=", Limit: 0.5, Unit: "ms"}},
		{"payment.errors<1%", Threshold{Expr: "payment.errors<1%", Tx: "payment", What: "errors", Op: "<", Limit: 1, Unit: "%"}},
		{"nopm.client>50000", Threshold{Expr: "nopm.client>50000", What: "nopm", Side: SideClient, Op: ">", Limit: 50000}},
		{"tpm.db<=9", Threshold{Expr: "tpm.db<=9", What: "tpm", Side: SideDB, Op: "<=", Limit: 9}},
		{"in_doubt<1%", Threshold{Expr: "in_doubt<1%", What: "in_doubt", Op: "<", Limit: 1, Unit: "%"}},
		{"new_order.in_doubt<3", Threshold{Expr: "new_order.in_doubt<3", Tx: "new_order", What: "in_doubt", Op: "<", Limit: 3}},
		{"lost_acks<1", Threshold{Expr: "lost_acks<1", What: "lost_acks", Op: "<", Limit: 1}},
	} {
		got, err := ParseThreshold(c.expr, thInfo, thTxs)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.expr, got, err, c.want)
		}
	}
}

// thDoc is a run of new_order at 1..100 ms (one each) with 1 error and 2
// in doubt, payment at 2 ms (100) with 3 errors, and nopm 51,000.
func thDoc(t *testing.T) *Document {
	tx := func(name string, ms []int, errs int64) Tx {
		h := latency.NewHistogram()
		for _, v := range ms {
			latency.Record(h, time.Duration(v)*time.Millisecond)
		}
		enc, err := latency.Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		return Tx{Name: name, Count: h.TotalCount(), Errors: errs, Histogram: enc, Latency: latency.Summarize(h)}
	}
	var no, pay []int
	for i := 1; i <= 100; i++ {
		no, pay = append(no, i), append(pay, 2)
	}
	nopm := 51000.0
	d := &Document{
		Metrics:      []Metric{{MetricDef: MetricDef{Key: "nopm"}, DB: &nopm}, {MetricDef: MetricDef{Key: "cache_ratio"}}},
		Transactions: []Tx{tx("new_order", no, 1), tx("payment", pay, 3), tx("other:report", nil, 0)},
	}
	d.Transactions[0].InDoubt = 2
	return d
}

func TestThresholdEvaluate(t *testing.T) {
	d := thDoc(t)
	for _, c := range []struct {
		expr     string
		met      bool
		measured float64 // -1: none
		note     string
	}{
		{"nopm>50000", true, 51000, ""},
		{"nopm>60000", false, 51000, ""},
		{"errors<2%", true, 4.0 * 100 / 206, ""},
		{"errors<1.9%", false, 4.0 * 100 / 206, ""},
		{"in_doubt<1", false, 2, ""},
		{"in_doubt<=1%", true, 2.0 * 100 / 206, ""},
		{"new_order.in_doubt<=2", true, 2, ""},
		{"payment.in_doubt<1", true, 0, ""},
		{"errors<=4", true, 4, ""},
		{"payment.errors<3", false, 3, ""},
		{"new_order.p95<100ms", true, 95, ""},
		{"new_order.p95<0.09s", false, 0.095, ""},
		{"new_order.max<=101000us", true, 100000, ""},
		{"new_order.avg<50ms", false, 50.5, ""},
		{"cache_ratio<1", false, -1, "not measured"},
		{"other:report.p50<1s", false, -1, "no other:report completed in the window"},
	} {
		th, err := ParseThreshold(c.expr, thInfo, thTxs)
		if err != nil {
			t.Fatal(err)
		}
		r := th.Evaluate(d)
		switch {
		case r.Met != c.met || r.Note != c.note || r.Threshold != c.expr:
			t.Errorf("%s: got %+v, want met %v, note %q", c.expr, r, c.met, c.note)
		case c.measured < 0 && r.Measured != nil:
			t.Errorf("%s: measured %v, want none", c.expr, *r.Measured)
		case c.measured >= 0 && (r.Measured == nil || *r.Measured < c.measured*0.99 || *r.Measured > c.measured*1.01):
			t.Errorf("%s: measured %v, want %v", c.expr, r.Measured, c.measured)
		}
	}
	ts, _ := ParseThresholds([]string{"nopm>50000", "errors<1.9%", "cache_ratio<1"}, thInfo, thTxs)
	if n := Missed(Evaluate(ts, d)); n != 2 {
		t.Errorf("missed %d, want 2", n)
	}
}

// TestThresholdLostAcks: lost_acks judges the durability audit's missing
// changes, and is not judged, nor missed, without an audit.
func TestThresholdLostAcks(t *testing.T) {
	th, err := ParseThreshold("lost_acks<1", thInfo, thTxs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		d         *Durability
		met, none bool
		measured  float64
	}{
		{"nothing missing", &Durability{Acknowledged: 900, InDoubt: 2}, true, false, 0},
		{"two missing", &Durability{Acknowledged: 900, Missing: 2}, false, false, 2},
		{"no audit", nil, false, true, 0},
	} {
		r := th.Evaluate(&Document{Durability: c.d})
		switch {
		case c.none && (!r.Unjudged || r.Measured != nil || !strings.HasPrefix(r.Note, "not judged: ") || Missed([]ThresholdResult{r}) != 0):
			t.Errorf("%s: %+v, want it not judged, and not missed", c.name, r)
		case !c.none && (r.Unjudged || r.Measured == nil || *r.Measured != c.measured || r.Met != c.met):
			t.Errorf("%s: %+v, want %v measured, met %v", c.name, r, c.measured, c.met)
		}
	}
}

// TestThresholdSides: a threshold on a metric judges the side it names,
// else the side that stands for the metric, and says which it judged.
// Issue 35: another client's work doubled the database's NOPM, which a
// threshold took for the run's.
func TestThresholdSides(t *testing.T) {
	db, client := 77689.0, 38146.0
	stands := func(side string) *Document {
		return &Document{Metrics: []Metric{{MetricDef: MetricDef{Key: "nopm"}, DB: &db, Client: &client, Headline: side}}}
	}
	for _, c := range []struct {
		expr     string
		d        *Document
		measured float64
		side     string
	}{
		{"nopm>60000", stands(SideClient), client, SideClient},
		{"nopm.db>60000", stands(SideClient), db, SideDB},
		{"nopm.client>60000", stands(SideClient), client, SideClient},
		{"nopm>60000", stands(SideDB), db, SideDB},
		{"nopm.client>60000", stands(SideDB), client, SideClient},
		// A document made before runs chose a side: the database's.
		{"nopm>60000", stands(""), db, SideDB},
	} {
		th, err := ParseThreshold(c.expr, thInfo, thTxs)
		if err != nil {
			t.Fatal(err)
		}
		r := th.Evaluate(c.d)
		if r.Measured == nil || *r.Measured != c.measured || r.Side != c.side || r.Met != (c.measured > 60000) {
			t.Errorf("%s on a run whose %q side stands: %+v, want %v measured on side %s", c.expr, c.d.Metrics[0].Headline, r, c.measured, c.side)
		}
	}
	th, _ := ParseThreshold("nopm.db>1", thInfo, thTxs)
	only := &Document{Metrics: []Metric{{MetricDef: MetricDef{Key: "nopm"}, Client: &client, Headline: SideClient}}}
	if r := th.Evaluate(only); r.Met || r.Measured != nil || r.Note != "not measured" || r.Side != SideDB {
		t.Errorf("nopm.db where the database keeps no figure: %+v, want it missed, not measured, on side db", r)
	}
}
