package report

import (
	"bytes"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
)

func render(t *testing.T, path string) string {
	t.Helper()
	d, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	// html/template writes "+" as "&#43;"; compare the text as shown.
	return html.UnescapeString(b.String())
}

// remote matches anything that would make the page fetch: a src or href
// to http(s) or a protocol-relative URL, a stylesheet link, an @import.
var remote = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//|<link\b|@import|url\(\s*["']?(https?:)?//`)

func TestHTMLSelfContained(t *testing.T) {
	for _, in := range []string{"testdata/run.json", "testdata/sweep.json"} {
		out := render(t, in)
		if m := remote.FindString(out); m != "" {
			t.Errorf("%s: the page refers to the network: %q", in, m)
		}
		if !strings.Contains(out, "Chart.js v4") || !strings.Contains(out, "chartjs-chart-error-bars") {
			t.Errorf("%s: the chart libraries are not inlined", in)
		}
		if strings.Count(out, "<script>") != 3 {
			t.Errorf("%s: %d inline scripts, want 3 (Chart.js, error bars, the page's)", in, strings.Count(out, "<script>"))
		}
	}
}

func TestHTMLSweepContent(t *testing.T) {
	out := render(t, "testdata/sweep.json")
	for _, want := range []string{
		"Figure 1", "System under test", "AMD EPYC", "23.5 GiB", "6.18.44-fc-v669",
		"PostgreSQL 15.14", "postgres://dbrig@/dbrig?host=%2Ftmp%2Fdbrig-sweep%2Fdata",
		"Server settings every point shares", "max_wal_size", "4GB",
		"vary.shared_buffers", "128MB, 256MB, 1GB, 2GB",
		"The OS page cache could not be dropped",
		// The first run document is next to the sweep: its config shows,
		// with the seed's digits intact.
		"Workload parameters (from runs/p00-r0.json)", "1795243990593273034",
		`"type":"lineWithErrorBars"`, `"type":"barWithErrorBars"`,
		"Change in NOPM over the baseline, %, vus=2", "Change in NOPM over the baseline, %, vus=4",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep report lacks %q", want)
		}
	}
	for i := range 8 {
		if !regexp.MustCompile(`<tr id="point-` + string(rune('0'+i)) + `">`).MatchString(out) {
			t.Errorf("no table row for point %d", i)
		}
	}
	// A row holds params, n, mean, CI, ±, p95 with its interval (3.318, 2.989 and 3.073 ms: 3.13 ± 0.42), gain, its interval and the verdict.
	row := regexp.MustCompile(`(?s)<tr id="point-7">(.*?)</tr>`).FindStringSubmatch(out)
	if row == nil {
		t.Fatal("no row for point 7")
	}
	for _, want := range []string{">2GB<", ">4<", ">3<", ">68,097<", ">65,022 – 71,173<", ">3.13 ± 0.42<", ">+31.0%<", ">+22.6% … +39.4%<", ">yes<"} {
		if !strings.Contains(row[1], want) {
			t.Errorf("point 7's row lacks %q:\n%s", want, row[1])
		}
	}
	if r := regexp.MustCompile(`(?s)<tr id="point-2">(.*?)</tr>`).FindStringSubmatch(out); r == nil || !strings.Contains(r[1], ">no<") {
		t.Error("point 2's gain (+1.1%, interval across 0) is not marked not significant")
	}
	if r := regexp.MustCompile(`(?s)<tr id="point-0">(.*?)</tr>`).FindStringSubmatch(out); r == nil || !strings.Contains(r[1], ">baseline<") {
		t.Error("point 0 is not marked as the baseline")
	}
}

// TestHTMLSweepWith: a sweep with reports beside the order entry, and at
// vus 0 alone, draws each workload's gains where it ran, and the host's
// CPU per point.
func TestHTMLSweepWith(t *testing.T) {
	out := render(t, "testdata/dvdstore-sweep/sweep.json")
	for _, want := range []string{
		"Change in orders per minute over the baseline, %, vus=5",
		"Change in orders per minute over the baseline, %, vus=10",
		"Change in dvd-reports completion time over the baseline, %, vus=0 (dvd-reports alone)",
		"Change in dvd-reports completion time over the baseline, %, vus=5",
		"orders per minute (higher is better) and dvd-reports completion time (lower is better)",
		"CPU and read latency per point", "rest of the host %",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep report lacks %q", want)
		}
	}
	// The order entry did not run at vus 0: no gain of it to draw there.
	if strings.Contains(out, "Change in orders per minute over the baseline, %, vus=0") {
		t.Error("the report draws the order entry's gain where it had no virtual users")
	}
}

// TestHTMLSweepAlone: the report needs nothing but the sweep document.
func TestHTMLSweepAlone(t *testing.T) {
	b, err := os.ReadFile("testdata/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sweep.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := render(t, path)
	if strings.Contains(out, "Workload parameters (from") {
		t.Error("shows run parameters with no run document present")
	}
	if !strings.Contains(out, `<tr id="point-7">`) || !strings.Contains(out, "lineWithErrorBars") {
		t.Error("the report from sweep.json alone lacks the points or the charts")
	}
}

func TestHTMLIncompleteSweep(t *testing.T) {
	s, err := result.ReadSweep("testdata/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	s.Complete, s.Done = false, 5
	for i := 5; i < len(s.Points); i++ {
		s.Points[i].Stats, s.Points[i].Gains, s.Points[i].Values = nil, nil, nil
	}
	var b bytes.Buffer
	if err := HTML(&b, &Doc{Path: "x/sweep.json", Sweep: s}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Incomplete: 5 of 24 runs done") {
		t.Error("an incomplete sweep is not flagged")
	}
}

func TestHTMLRunContent(t *testing.T) {
	out := render(t, "testdata/run.json")
	for _, want := range []string{
		"Figure 1", "AMD EPYC", "sqlite 3.53.4", "sqlite:dbrig-data/dbrig.db", "1795243990593273034",
		`<tr id="tx-new_order">`, `<tr id="tx-stock_level">`, "331.01",
		"new_order_rollbacks", `class="pass"`, "one warehouse: nothing is remote",
		`"rampShade":{"label":"ramp-up","until":5}`, "new_order per minute", `"type":"logarithmic"`,
		"72,975",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("run report lacks %q", want)
		}
	}
}

func TestLayoutOrder(t *testing.T) {
	s, err := result.ReadSweep("testdata/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	l := layout(s)
	if strings.Join(l.xs, ",") != "128MB,256MB,1GB,2GB" || strings.Join(l.series, ",") != "vus=2,vus=4" {
		t.Fatalf("layout: x %v, series %v", l.xs, l.series)
	}
	if l.at[1][3] != 7 || l.at[0][0] != 0 {
		t.Errorf("points placed wrong: %v", l.at)
	}
	s.Varied = s.Varied[:1]
	for i := range s.Points {
		delete(s.Points[i].Params, "vus")
	}
	if l := layout(s); len(l.series) != 1 {
		t.Errorf("one varied parameter gives %d lines, want 1", len(l.series))
	}
}

func runDoc(nopm, p95 float64) *Doc {
	d := &result.Document{Workload: "tproc-c", PrimaryMetric: "nopm", PrimaryTx: "new_order"}
	d.Metrics = []result.Metric{
		{MetricDef: result.MetricDef{Key: "nopm", Label: "NOPM", HigherIsBetter: true}, DB: &nopm, Client: &nopm},
		{MetricDef: result.MetricDef{Key: "tpm", Label: "TPM", HigherIsBetter: true}, Client: workload.Known(nopm * 2.2)},
	}
	d.Transactions = []result.Tx{{Name: "new_order", PerMinute: nopm}}
	d.Transactions[0].Latency.P95 = p95
	return &Doc{Path: "x.json", Run: d}
}

func find(c *Comparison, group, metric string) CompareRow {
	for _, g := range c.Groups {
		if g.Name != group {
			continue
		}
		for _, r := range g.Rows {
			if r.Metric == metric {
				return r
			}
		}
	}
	return CompareRow{A: math.NaN(), B: math.NaN()}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCompareRuns(t *testing.T) {
	c, err := Compare(runDoc(50000, 4), runDoc(55000, 3))
	if err != nil {
		t.Fatal(err)
	}
	if d := find(c, "headline", "nopm").Diff(); !near(d, 10) {
		t.Errorf("nopm diff %v, want +10", d)
	}
	if d := find(c, "headline", "tpm_client").Diff(); !near(d, 10) {
		t.Errorf("tpm_client diff %v, want +10", d)
	}
	r := find(c, "new_order", "p95_ms")
	if !near(r.Diff(), -25) || !r.LowerIsBetter {
		t.Errorf("p95 diff %v (lower is better %v), want -25", r.Diff(), r.LowerIsBetter)
	}
	// tpm (database side) is absent from both: no row at all.
	if r := find(c, "headline", "tpm"); !math.IsNaN(r.A) {
		t.Error("a metric neither document has got a row")
	}
	var b bytes.Buffer
	c.Text(&b)
	if !strings.Contains(b.String(), "+10.0%") || !strings.Contains(b.String(), "-25.0%") {
		t.Errorf("text lacks the differences:\n%s", b.String())
	}
	b.Reset()
	if err := CompareHTML(&b, c); err != nil {
		t.Fatal(err)
	}
	if page := html.UnescapeString(b.String()); !strings.Contains(page, `<td class="num good">+10.0%</td>`) || !strings.Contains(page, `<td class="num good">-25.0%</td>`) {
		t.Error("HTML does not mark a rise in throughput and a fall in latency as better")
	}
	if m := remote.FindString(b.String()); m != "" {
		t.Errorf("comparison page refers to the network: %q", m)
	}
}

func TestCompareZeroAndMissing(t *testing.T) {
	if d := (CompareRow{A: 0, B: 5}).Diff(); !math.IsNaN(d) {
		t.Errorf("diff from 0 = %v, want NaN", d)
	}
	if d := (CompareRow{A: 5, B: math.NaN()}).Diff(); !math.IsNaN(d) {
		t.Errorf("diff to a missing value = %v, want NaN", d)
	}
	if signedPct(math.NaN()) != "—" {
		t.Error("a missing difference should print as a dash")
	}
}

func TestCompareSweeps(t *testing.T) {
	a, b := mustLoad(t, "testdata/sweep.json"), mustLoad(t, "testdata/sweep.json")
	// B: every mean 20% higher, its points in another order, one extra.
	pts := b.Sweep.Points
	for i := range pts {
		st := *pts[i].Stats["nopm"]
		st.Mean, st.CILow, st.CIHigh = st.Mean*1.2, st.CILow*1.2, st.CIHigh*1.2
		pts[i].Stats = map[string]*result.Stats{"nopm": &st}
	}
	pts[0], pts[7] = pts[7], pts[0]
	b.Sweep.Points = append(pts, result.SweepPoint{Params: map[string]string{"shared_buffers": "4GB", "vus": "2"}})
	c, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	r := find(c, "shared_buffers=2GB vus=4", "nopm (mean)")
	if !near(r.Diff(), 20) || r.Note != "95% CIs apart" {
		t.Errorf("2GB vus=4: diff %v note %q, want +20 and CIs apart", r.Diff(), r.Note)
	}
	if r := find(c, "shared_buffers=128MB vus=2", "nopm (mean)"); !near(r.Diff(), 20) {
		t.Errorf("points matched by position, not params: diff %v", r.Diff())
	}
	if r := find(c, "shared_buffers=4GB vus=2", "nopm (mean)"); !math.IsNaN(r.A) || !math.IsNaN(r.B) {
		t.Errorf("a point only B has: %+v", r)
	}
	if _, err := Compare(a, runDoc(1, 1)); err != ErrMixedKinds {
		t.Errorf("run vs sweep: %v, want ErrMixedKinds", err)
	}
}

// TestHTMLDurabilityRun: a run whose managed PostgreSQL 15 was killed 15 s
// in and restarted (--kill-server-at 15s --audit-durability): the kill and
// the restart are marked on the throughput chart, the outage around them
// shaded, the transactions in doubt drawn beside it, counted in the
// per-type table and named in Reliability with the outage per VU, and the
// audit's finding listed.
func TestHTMLDurabilityRun(t *testing.T) {
	out := render(t, "testdata/durability-run.json")
	for _, want := range []string{
		`"eventMarks":{"marks":[{"at":15`, "server killed (SIGKILL to pid", "server up again",
		`"label":"no transaction completed"`, "Shaded purple: the outage around an action",
		"Outage around the action at 15.0 s, server killed (SIGKILL to pid 1862): no transaction completed from 15.1 s for 3.7 s; per VU 3.7 s",
		"in doubt per second", `"yAxisID":"y1"`, "Reliability", ">in doubt</th>",
		"In doubt in the measured window: 4 (new_order 3, delivery 1)", "3 in doubt (the commit was sent",
		"0 missing;", "Consistency check after the run: passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("durability run report lacks %q", want)
		}
	}
}

// TestHTMLLostRun: a run whose managed PostgreSQL 15 was killed 30 s in
// and never restarted: the page says it failed and what its figures
// cover, in red above the figures, and the stretch without a server is
// shaded on the throughput and the latency-per-second charts.
func TestHTMLLostRun(t *testing.T) {
	out := render(t, "testdata/lost-run.json")
	for _, want := range []string{
		`<div class="failed">FAILED: server lost at 29.8 s and not back 30.0 s later; the figures cover the 24.8 s of the 50.0 s window the server was up.</div>`,
		"Latency per second", `"spanShade":{"spans":[{"color":"rgba(192, 57, 43, 0.18)","from":29.8`, `"label":"no server"`,
		"Throughput is over the 24.8 s of the window the server was up",
		"the server was lost, so the database",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lost run report lacks %q", want)
		}
	}
	if strings.Contains(out, "keeps no counter") {
		t.Error("the report gives the wrong reason for the database's missing figures")
	}
}

// TestHTMLStallRun: a run whose server's processes were stopped for 15 s
// (SIGSTOP) 30 s in: the stall is named and shaded, the second it ends in
// shows the 15 s its transactions waited, and the telemetry's gap is
// shaded on its charts.
func TestHTMLStallRun(t *testing.T) {
	out := render(t, "testdata/stall-run.json")
	for _, want := range []string{
		"Stall from 29.9 s for 15.1 s", `"label":"stall"`, `"y":15138.815`,
		"Telemetry: no database readings from 29.1 s to 45.2 s", `"label":"no database telemetry"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stall run report lacks %q", want)
		}
	}
}

// TestHeadlineFirst: a run's page shows first the side of a metric that
// stands for it: the client's where the run chose it over a database
// figure that other clients swelled, the database's otherwise.
func TestHeadlineFirst(t *testing.T) {
	db, client := 77689.0, 38732.0
	for side, first := range map[string]string{result.SideClient: "NOPM (client)", result.SideDB: "NOPM (database)", "": "NOPM (database)"} {
		st := metricStats(result.Metric{MetricDef: result.MetricDef{Label: "NOPM"}, DB: &db, Client: &client, Headline: side})
		if len(st) != 2 || st[0].Label != first {
			t.Errorf("headline %q: stats %+v, want %s first", side, st, first)
		}
	}
}

// TestHTMLSweepFaults: a failover sweep's report (Patroni, a primary and
// an asynchronous replica, ttl 6 s against 12 s, every run audited)
// draws the outage at each point with its intervals and its change over
// the baseline in seconds (significant here: Welch's interval of the
// difference excludes 0, though each mean's own, from two repetitions,
// is wide), says it in a sentence with what the audits
// found, and gives the points table the outage's and the audit's columns.
func TestHTMLSweepFaults(t *testing.T) {
	out := render(t, "testdata/failover-sweep/sweep.json")
	for _, want := range []string{
		`id="faults"`, "Faults: the outage and the durability audit", "Outage at each point (lower is better)",
		"Change in the outage over the baseline, s (lower is better)", `["server=ttl12-loop2","(baseline)"]`,
		"server=ttl6-loop1 cut the outage by 5.94 s (95% CI 4.31 to 7.56 s), from 11.9 s at server=ttl12-loop2 to 5.98 s: significant",
		"server=ttl6-loop1: 2 audits found 3 of 38,501 acknowledged missing (a mean of 1.50 per run, 95% CI -17.56 to 20.56), 2 in doubt",
		"server=ttl12-loop2: 2 audits found 1 of 26,923 acknowledged missing (a mean of 0.50 per run, 95% CI -5.85 to 6.85), 3 in doubt",
		"outage 95% CI", "per VU median / max s", "missing",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the failover sweep's report lacks %q", want)
		}
	}
	row := regexp.MustCompile(`(?s)<tr id="point-0">(.*?)</tr>`).FindStringSubmatch(out)
	if row == nil {
		t.Fatal("no row for point 0")
	}
	for _, want := range []string{">5.98<", ">2.41 – 9.56<", ">5.99 / 6.04<", `class="num bad" title="2 audits">3 of 38,501<`} {
		if !strings.Contains(row[1], want) {
			t.Errorf("point 0's row lacks %q:\n%s", want, row[1])
		}
	}
	// A sweep without an outage or an audit has none of it.
	if plain := render(t, "testdata/sweep.json"); strings.Contains(plain, `id="faults"`) || strings.Contains(plain, "outage 95% CI") {
		t.Error("a sweep without faults shows the faults' section or columns")
	}
}

// TestSweepFaultsFromRuns: a sweep document from before the points kept
// their faults gets them from its run documents, where they are beside
// it: here two repetitions of a run whose server was killed 15 s in and
// restarted, audited.
func TestSweepFaultsFromRuns(t *testing.T) {
	dir := t.TempDir()
	run, err := os.ReadFile("testdata/durability-run.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"p01-r1.json", "p01-r2.json"} {
		if err := os.WriteFile(filepath.Join(dir, "runs", name), run, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := `{"schema_version": 2, "kind": "sweep", "name": "old", "workload": "tproc-c",
		"metrics": [{"key": "nopm", "label": "NOPM", "higher_is_better": true}], "primary_metric": "nopm",
		"varied": [], "repeat": 2, "done": 2, "complete": true, "order": [[0,1],[0,2]],
		"points": [{"params": {}, "runs": ["runs/p01-r1.json", "runs/p01-r2.json"], "values": {"nopm": [100, 110]}, "p95_ms": [1, 2], "baseline_point": -1}]}`
	path := filepath.Join(dir, "sweep.json")
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p := d.Sweep.Points[0]
	if st := p.FaultStats[result.OutageKey]; st == nil || st.N != 2 || st.Mean != 3.684 {
		t.Errorf("outage %+v, want its runs' 3.684 s twice", st)
	}
	if du := p.Durability; du == nil || *du != (result.DurabilitySum{Audits: 2, Acknowledged: 2 * 50936, InDoubt: 6}) {
		t.Errorf("audits %+v, want two of 50,936 acknowledged, 3 in doubt", du)
	}
	var b bytes.Buffer
	PlainText(&b, d)
	for _, want := range []string{"Faults: the outage and the durability audit", "point 1: 2 audits found 0 of 101,872 acknowledged missing, 6 in doubt", "3.68"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
}
