package report

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestExplainSections: a real run with telemetry (PostgreSQL 15 confined
// to 320MB, a 64MB buffer cache) shows its AWR-like sections with the
// figures its recording holds, in HTML and as text alike.
func TestExplainSections(t *testing.T) {
	const in = "testdata/telemetry-run.json"
	d, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	s := telemetry.Summarize(d.Run.Telemetry)
	if s.DB == nil || s.DB.HitPct == nil || s.Host == nil || s.Host.Data == nil || len(s.Waits) == 0 {
		t.Fatalf("the fixture's summary lacks a side: %+v", s)
	}
	_, event, _ := strings.Cut(s.Waits[0].Name, "/")
	want := []string{
		"What the telemetry says first", "does not fit in the server's memory limit (320.0 MiB)",
		"Load profile", "physical reads (cache misses)", fmtCount(s.DB.Rates[telemetry.PhysicalReads]),
		"buffer hit %", fmt.Sprintf("%.2f%%", *s.DB.HitPct),
		"Top wait events", event, fmt.Sprintf("%.1f%%", s.Waits[0].Pct),
		"Top SQL", "tprocc_neword",
		"Host CPUs", "Bzy_MHz", "Avg_MHz", pct1(s.Host.CPU.Busy()),
		"Host disks", s.Host.Data.Device + " (data)", fmt.Sprintf("%.1f", s.Host.Data.ReadIOPS),
		"Settings", "track_io_timing", "pg_stat_statements",
	}
	inReport(t, in, d, want, []string{"Active sessions by wait class", "Host CPU", "Data disk " + s.Host.Data.Device})
}

// inReport wants each of want in the HTML report of d (read from in) and
// in its report --text, and each of charts in the HTML.
func inReport(t *testing.T, in string, d *Doc, want, charts []string) {
	t.Helper()
	page := render(t, in)
	var text bytes.Buffer
	PlainText(&text, d)
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("the HTML report lacks %q", w)
		}
		if !strings.Contains(text.String(), w) {
			t.Errorf("report --text lacks %q", w)
		}
	}
	for _, chart := range charts {
		if !strings.Contains(page, chart) {
			t.Errorf("the HTML report lacks the chart's %q", chart)
		}
	}
}

// TestOneLine: the SLOB-like line of a block-io run (PostgreSQL 15, 4
// sessions over a 256MB table and a 128MB buffer cache) carries the
// figures its recording gives, per second and per CPU core, in the HTML,
// the text report and the end of the run.
func TestOneLine(t *testing.T) {
	const in = "testdata/blockio-run.json"
	d, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	s := telemetry.Summarize(d.Run.Telemetry)
	if s.DB == nil || s.Host == nil || s.Host.Data == nil || s.Host.Server == nil {
		t.Fatalf("the fixture's summary lacks a side: %+v", s)
	}
	host, busy := s.Cores()
	misses := s.DB.Rates[telemetry.PhysicalReads]
	want := []string{
		"In one line", "PREADS/s", fmtCount(misses), fmtCount(s.DB.Rates[telemetry.LogicalReads]),
		fmt.Sprintf("%.2f", busy), fmt.Sprintf("%.2f", s.Host.Data.ReadAwaitMs),
		fmt.Sprintf("Per CPU core of the host (%.0f): %s cache misses/s", host, fmtCount(misses/host)),
		fmt.Sprintf("per CPU the server kept busy (%.2f): %s cache misses/s", busy, fmtCount(misses/busy)),
		"the OS page cache served at least the other",
	}
	page := render(t, in)
	var text, end bytes.Buffer
	PlainText(&text, d)
	Text(&end, d.Run)
	for _, w := range want {
		for name, out := range map[string]string{"the HTML report": page, "report --text": text.String(), "the end of the run": end.String()} {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}
}

// TestDiskShare: the database's misses and the data disk's reads are set
// side by side; a disk that read more than the database missed (another
// process on a shared disk) leaves a remainder that is named, not put
// down to the database, and no share is capped at 100%.
func TestDiskShare(t *testing.T) {
	d, err := Load("testdata/blockio-run.json")
	if err != nil {
		t.Fatal(err)
	}
	s := telemetry.Summarize(d.Run.Telemetry)
	data := *s.Host.Data
	host := *s.Host
	host.Data = &data
	s.Host = &host
	s.DB.Rates = map[string]float64{telemetry.PhysicalReads: 0.33}
	data.ReadIOPS = 8.43
	n := diskShareNote(s)
	for _, w := range []string{"missed its cache 0.33 times/s", "read 8.43 times/s", "8.10 reads/s (96% of the device's) are not the database's misses"} {
		if !strings.Contains(n, w) {
			t.Errorf("note %q lacks %q", n, w)
		}
	}
	if strings.Contains(n, "100%") {
		t.Errorf("note %q caps a share", n)
	}
	data.ReadIOPS = 0.25
	n = diskShareNote(s)
	if !strings.Contains(n, "at most 76% of the misses reached the disk") || !strings.Contains(n, "at least the other 0.08/s") {
		t.Errorf("note %q: want at most 76%% to the disk, at least 0.08/s from the page cache", n)
	}
	// A bound under 1% is rounded up to a tenth, never printed as 0%.
	s.DB.Rates[telemetry.PhysicalReads], data.ReadIOPS = 390.8, 0.25
	if n = diskShareNote(s); !strings.Contains(n, "at most 0.1% of the misses reached the disk") {
		t.Errorf("note %q: want at most 0.1%% to the disk", n)
	}
}

// TestExplainNotes: the traps a reader must know of come first.
func TestExplainNotes(t *testing.T) {
	d, err := Load("testdata/telemetry-run.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := *d.Run
	rec := *doc.Telemetry
	host := *rec.Host
	host.Facts.CpufreqGovernor = "powersave"
	rec.Host = &host
	doc.Telemetry = &rec
	notes := strings.Join(explainNotes(&doc, telemetry.Summarize(&rec)), "\n")
	if !strings.Contains(notes, "governor is powersave") {
		t.Errorf("notes lack the powersave governor:\n%s", notes)
	}
	// One client CPU allowed, and half of the host's two used: saturated.
	doc.Config = map[string]any{"client_cpus": float64(1)}
	busy := &telemetry.HostSummary{Client: 48, CPU: telemetry.CPUTimes{User: 93, Steal: 6}}
	notes = strings.Join(hostNotes(&doc, telemetry.HostFacts{OnlineCPUs: 2}, busy), "\n")
	for _, w := range []string{"The client was saturated: it used 0.96 of the 1 CPUs", "93% busy", "6.0% of the CPU time (steal)"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	embedded := strings.Join(hostNotes(&doc, telemetry.HostFacts{OnlineCPUs: 2, Embedded: true}, busy), "\n")
	if !strings.Contains(embedded, "with the database engine inside it") || strings.Contains(embedded, "waiting for the client") {
		t.Errorf("an embedded database's saturated client:\n%s", embedded)
	}
	idle := &telemetry.HostSummary{Client: 10, CPU: telemetry.CPUTimes{User: 20}}
	if n := hostNotes(&doc, telemetry.HostFacts{OnlineCPUs: 2}, idle); len(n) != 0 {
		t.Errorf("notes on a calm host: %v", n)
	}
	if explainHTML(&page{}, &result.Document{}) != nil {
		t.Error("a run without telemetry has telemetry sections")
	}
}

// TestSweepWhy: a confined sweep's points show what the host and the
// database did at each, from the figures the sweep kept per repetition.
func TestSweepWhy(t *testing.T) {
	const in = "testdata/confined-sweep/sweep.json"
	d, err := Load(in)
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, in)
	want := []string{"Why: the host and the database at each point", "Why: cache misses, disk reads and latency per point",
		"disk reads/s", "cache hit %", "more than the server's memory limit"}
	for _, p := range d.Sweep.Points {
		for _, k := range []string{"read_iops", "hit_pct", "physical_reads_per_s", "cpu_busy_pct"} {
			if len(p.Telemetry[k]) != len(p.Values["nopm"]) {
				t.Errorf("point %v: %d values of %s for %d runs", p.Params, len(p.Telemetry[k]), k, len(p.Values["nopm"]))
			}
			want = append(want, explainMean(p, k))
		}
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("the sweep report lacks %q", w)
		}
	}
}

// TestCostNote: the samplers' CPU against all the client used, by the
// samples' own client shares: 2 CPUs, 10% for 10 s is 2 s.
func TestCostNote(t *testing.T) {
	rec := &telemetry.Recording{
		Host: &telemetry.HostRecord{Facts: telemetry.HostFacts{OnlineCPUs: 2},
			Samples: []telemetry.HostSample{{DT: 5, Client: 10}, {DT: 5, Client: 10}}},
		Cost: &telemetry.Cost{Samples: 0.006, Sessions: 0.014},
	}
	want := "Telemetry's own sampling used 20 ms of the client's CPU over 10 s (host and counters 6 ms, sessions 14 ms): 1.00% of the 2.00 s the client used."
	if got := costNote(rec); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	rec.Cost = nil
	if got := costNote(rec); got != "" {
		t.Errorf("without a cost: %q", got)
	}
}

// TestOneLineSessions: a workload that runs its own sessions (the CPU
// test's --sessions) shows them in the line's first column, which read 0
// while only the driver's "vus" was looked up.
func TestOneLineSessions(t *testing.T) {
	d, err := Load("testdata/blockio-run.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"vus": 4.0}, "4"},
		{map[string]any{"sessions": 3.0}, "3"},
		{map[string]any{}, "0"},
	} {
		d.Run.Config = c.cfg
		b := oneLine(d.Run, telemetry.Summarize(d.Run.Telemetry))
		if got := b.Table.Rows[0].Cells[0].Text; got != c.want {
			t.Errorf("config %v: sessions %q, want %q", c.cfg, got, c.want)
		}
	}
}

// TestCPUTableAddsUp: in the turbostat-like table of a recorded run
// (iowait 2.5% of all CPUs, cpuidle's POLL and haltpoll residency), each
// row's usr, sys, irq, steal, iowait and idle-state columns add up to
// 100%: iowait is counted once, not again inside the C-states.
func TestCPUTableAddsUp(t *testing.T) {
	d, err := Load("testdata/telemetry-run.json")
	if err != nil {
		t.Fatal(err)
	}
	rec := d.Run.Telemetry
	s := telemetry.Summarize(rec)
	if s.Host.CPU.IOWait < 1 || len(rec.Host.CStates) == 0 {
		t.Fatalf("the fixture has iowait %.1f%% and C-states %v: want some of both", s.Host.CPU.IOWait, rec.Host.CStates)
	}
	tb := cpuTable(rec.Host, s.Host)
	if got, want := len(tb.Rows), 1+len(s.Host.PerCPU); got != want {
		t.Fatalf("%d rows, want %d", got, want)
	}
	for _, r := range tb.Rows {
		var sum, busy float64
		for i, c := range r.Cells[4:] {
			v, err := strconv.ParseFloat(c.Text, 64)
			if err != nil {
				t.Fatalf("row %s: cell %q", r.Cells[0].Text, c.Text)
			}
			sum += v
			if i < 3 {
				busy += v
			}
		}
		// Each cell is rounded to 0.1.
		if math.Abs(sum-100) > 0.05*float64(len(r.Cells)-4) {
			t.Errorf("CPU %s: usr..idle columns add up to %.1f%%, want 100", r.Cells[0].Text, sum)
		}
		if b, _ := strconv.ParseFloat(r.Cells[1].Text, 64); math.Abs(b-busy) > 0.15 {
			t.Errorf("CPU %s: Busy%% %.1f, usr + sys + irq %.1f", r.Cells[0].Text, b, busy)
		}
	}
}
