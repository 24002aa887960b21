package result

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/workload"
)

// split is a run's latencies dealt at random to the parts of a split run:
// each part's own document, as it reads back from its file, and what one
// process would have measured of them all.
type split struct {
	files [][]byte // the parts' documents, part 1 (the marker) first
	all   []*hdrhistogram.Histogram
	// seconds are the per-second histograms of all the parts together.
	seconds map[int]*hdrhistogram.Histogram
	counts  map[int][]int64
	start   time.Time
}

const (
	splitParts   = 3
	splitSeconds = 5
	splitRunID   = "7f3c1a2b-9d4e-4f00-8a11-0123456789ab"
)

var splitTx = []string{"t1", "t2"}

// newSplit deals n random latencies over the parts, transaction types and
// seconds of a split run.
func newSplit(t testing.TB, n int) *split {
	t.Helper()
	rng := rand.New(rand.NewPCG(23, 1))
	s := &split{seconds: map[int]*hdrhistogram.Histogram{}, counts: map[int][]int64{},
		start: time.Date(2026, 11, 25, 18, 31, 2, 0, time.UTC)}
	runs := make([]Run, splitParts)
	for i := range runs {
		runs[i] = s.partRun(i + 1)
	}
	for range splitTx {
		s.all = append(s.all, latency.NewHistogram())
	}
	for range n {
		p, tx, sec := rng.IntN(splitParts), rng.IntN(len(splitTx)), 1+rng.IntN(splitSeconds)
		d := time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond))
		r := runs[p].Result
		r.Tx[tx].Count++
		latency.Record(r.Tx[tx].Hist, d)
		latency.Record(s.all[tx], d)
		pt := &r.Series[sec-1]
		pt.Counts[tx]++
		latency.Record(pt.Hist, d)
		latency.Record(pt.WaitHist, d/10)
		if s.seconds[sec] == nil {
			s.seconds[sec], s.counts[sec] = latency.NewSecondHistogram(), make([]int64, len(splitTx))
		}
		latency.Record(s.seconds[sec], d)
		s.counts[sec][tx]++
	}
	for i, run := range runs {
		d, err := FromRun(run)
		if err != nil {
			t.Fatal(err)
		}
		d.Host.Hostname = fmt.Sprintf("client-%d", i+1)
		b, err := encode(d)
		if err != nil {
			t.Fatal(err)
		}
		s.files = append(s.files, b)
	}
	return s
}

// partRun is part i's run before any latency is dealt to it.
func (s *split) partRun(i int) Run {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	run := sampleRun()
	run.Config = map[string]any{"vus": 6, "duration": "60s", "client_cpus": i}
	run.TxNames, run.TallyNames = splitTx, []string{"b", "a"}
	open := s.start.Add(10 * time.Second)
	agreed := map[string]any{"workload": "w", "parts": splitParts, "lost_after": "30s"}
	run.Part = &Part{
		Index: i, Of: splitParts, RunID: splitRunID, RunName: "dbrig", Marker: i == 1,
		ConfigSHA256: agreedHash(run.Config, agreed), Agreed: agreed, VUs: 2,
		Schedule:    PartSchedule{Start: s.start, Open: open, Close: open.Add(30 * time.Second), HoldMs: 500},
		Clock:       PartClock{OffsetMs: float64(i), UncertaintyMs: 0.1 * float64(i)},
		WindowStart: open.Add(ms(float64(i))), WindowEnd: open.Add(30*time.Second + ms(2*float64(i))),
		EndFlushes: int64(10 * i),
	}
	r := &driver.Result{
		Started: s.start, WindowStart: open, WindowEnd: open.Add(30 * time.Second),
		Tally: driver.Tally{int64(i), int64(100 * i)},
	}
	for _, name := range splitTx {
		r.Tx = append(r.Tx, driver.TxResult{Name: name, Hist: latency.NewHistogram(), Retries: 1, InDoubt: int64(i)})
	}
	for sec := 1; sec <= splitSeconds; sec++ {
		// A part's ticks fall a few ms off the whole second.
		r.Series = append(r.Series, driver.Point{T: float64(sec) + 0.002*float64(i-2), Phase: fmt.Sprintf("p%d", i),
			Counts: make([]int64, len(splitTx)), InDoubt: 1, Hist: latency.NewSecondHistogram(), WaitHist: latency.NewSecondHistogram()})
	}
	r.Pool = &driver.Pool{Terminals: 2, Sessions: 1, InUseMax: 1, Wait: latency.NewHistogram(), AllInUse: 0.1 * float64(i)}
	latency.Record(r.Pool.Wait, time.Duration(i)*time.Millisecond)
	run.Result = r
	run.Marks = nil
	if i == 1 {
		run.Marks = []workload.Mark{{At: 10, Values: map[string]int64{workload.Xacts: 1000}, Server: "10.0.0.1:5432"},
			{At: 40, Values: map[string]int64{workload.Xacts: 5000}, Server: "10.0.0.2:5432"}}
	}
	return run
}

// docs reads the parts' documents back, as dbrig merge would, in order
// of ids (1-based); paths are p1.json, ...
func (s *split) docs(t testing.TB, ids ...int) ([]*Document, []string) {
	t.Helper()
	var docs []*Document
	var paths []string
	for _, id := range ids {
		path := fmt.Sprintf("p%d.json", id)
		d, err := ParseRun(path, s.files[id-1])
		if err != nil {
			t.Fatal(err)
		}
		docs, paths = append(docs, d), append(paths, path)
	}
	return docs, paths
}

// fakeSummary is a workload's Resummarize for the tests: it keeps the
// figures it was given and makes its metric of the first tally.
type fakeSummary struct{ got *workload.Figures }

func (f *fakeSummary) summarize(in workload.Figures) (workload.Summary, error) {
	f.got = &in
	return workload.Summary{
		Values: map[string]workload.Value{"rate": {Client: workload.Known(float64(in.Counters["b"]))}},
		Lines:  []string{"the workload's own line"},
		Audit:  []workload.AuditItem{{Name: "mix", Result: "PASS"}},
	}, nil
}

func (f *fakeSummary) options() MergeOptions {
	return MergeOptions{Summarize: f.summarize, Info: sampleRun().Info}
}

// The merged transactions are one process's: counts summed, and each
// type's histogram, merged from the parts' documents, bucket for bucket
// the one that held all the latencies; the workload is handed these
// figures, the tallies in its order and the marks less the other parts'
// flushes.
func TestMergeHistogramsExact(t *testing.T) {
	s := newSplit(t, 20000)
	docs, paths := s.docs(t, 1, 2, 3)
	var f fakeSummary
	d, err := Merge(docs, paths, f.options())
	if err != nil {
		t.Fatal(err)
	}
	for i, tx := range d.Transactions {
		h, err := latency.Decode(tx.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		if tx.Name != splitTx[i] || tx.Count != s.all[i].TotalCount() || tx.Retries != splitParts || tx.InDoubt != 1+2+3 {
			t.Errorf("%s: count %d retries %d in doubt %d, want %d, %d and 6", tx.Name, tx.Count, tx.Retries, tx.InDoubt, s.all[i].TotalCount(), splitParts)
		}
		if !reflect.DeepEqual(h.Export().Counts, s.all[i].Export().Counts) {
			t.Errorf("%s: merged histogram differs from the one of all latencies", tx.Name)
		}
		if want := latency.Summarize(s.all[i]); tx.Latency != want {
			t.Errorf("%s: latency %+v, want %+v", tx.Name, tx.Latency, want)
		}
		if pm := float64(tx.Count) * 60 / 30; tx.PerMinute != pm {
			t.Errorf("%s: per minute %v, want %v", tx.Name, tx.PerMinute, pm)
		}
	}
	g := f.got
	if g == nil {
		t.Fatal("Summarize not called")
	}
	if g.Counters["b"] != 6 || g.Counters["a"] != 600 || d.Counters["b"] != 6 || d.Counters["a"] != 600 {
		t.Errorf("counters %v handed over, %v in the document: want b=6 a=600", g.Counters, d.Counters)
	}
	for i, tx := range g.Result.Tx {
		if tx.Hist.TotalCount() != s.all[i].TotalCount() || tx.Count != s.all[i].TotalCount() {
			t.Errorf("Summarize got %s with %d latencies, count %d, want %d", tx.Name, tx.Hist.TotalCount(), tx.Count, s.all[i].TotalCount())
		}
	}
	if g.Start.Values[workload.Xacts] != 1000 || g.End.Values[workload.Xacts] != 5000-20-30 || g.End.Lost ||
		g.Start.Server != "10.0.0.1:5432" || g.End.Server != "10.0.0.2:5432" || d.Marks[1].Server != "10.0.0.2:5432" {
		t.Errorf("marks %v → %v, want 1000 → 4950 (parts 2 and 3 flushed 20 and 30 in the window), each on its server", g.Start, g.End)
	}
	if d.Marks[1].Values[workload.Xacts] != 4950 || docs[0].Marks[1].Values[workload.Xacts] != 5000 {
		t.Errorf("document's end xacts %d (want 4950), the marker's own %d (want 5000 still)", d.Marks[1].Values[workload.Xacts], docs[0].Marks[1].Values[workload.Xacts])
	}
	if g.Terminals != 6 || g.Sessions != 6 || g.Config["vus"] != 6.0 || g.Config["client_cpus"] != nil {
		t.Errorf("terminals %d sessions %d config %v", g.Terminals, g.Sessions, g.Config)
	}
	if w := g.Result.WindowSeconds(); w != 30 || !g.Result.WindowStart.Equal(docs[0].Part.WindowStart) {
		t.Errorf("window %v s from %v, want the marker's 30 s from %v", w, g.Result.WindowStart, docs[0].Part.WindowStart)
	}
	if m, _ := d.Metric("rate"); m.Client == nil || *m.Client != 6 || len(d.Audit) != 1 {
		t.Errorf("metrics %+v audit %+v: want the workload's", d.Metrics, d.Audit)
	}
	want := "Parts 1–3 of 3 on 3 hosts: windows started within 2.0 ms and ended within 4.0 ms of each other (clock offsets known to ±0.3 ms)"
	if len(d.Lines) != 2 || d.Lines[0] != "the workload's own line" || d.Lines[1] != want {
		t.Errorf("lines %q, want the workload's then %q", d.Lines, want)
	}
	sessions(t, d, s)
}

// sessions checks a merged document's sessions and parts sections.
func sessions(t *testing.T, d *Document, s *split) {
	t.Helper()
	ss := d.Sessions
	if ss == nil || ss.Terminals != 6 || ss.Sessions != 3 || ss.InUseMax != 3 || ss.AllInUse != 0.1 {
		t.Fatalf("sessions %+v", ss)
	}
	if h, _ := latency.Decode(ss.WaitHistogram); h == nil || h.TotalCount() != 3 || h.Max() < 2900 {
		t.Errorf("sessions' wait histogram %v: want the 3 parts' 1, 2, 3 ms", h)
	}
	p := d.Parts
	if p.Of != 3 || p.RunID != splitRunID || !slices.Equal(p.Present, []int{1, 2, 3}) || p.Missing != nil || p.Marker != 1 || len(p.Members) != 3 {
		t.Fatalf("parts %+v", p)
	}
	if m := p.Members[2]; m.Part.Index != 3 || m.Host.Hostname != "client-3" || m.Sessions == nil || m.Sessions.Terminals != 2 {
		t.Errorf("member 3 = %+v", m)
	}
	if !d.StartedAt.Equal(s.start) || d.Host.Hostname != "client-1" || d.WindowSeconds != 30 {
		t.Errorf("started %v host %s window %v: want the schedule's start and the marker's host and window", d.StartedAt, d.Host.Hostname, d.WindowSeconds)
	}
	for _, n := range d.Notes {
		if strings.Contains(n, "share") {
			t.Errorf("merged notes keep a part's note: %q", n)
		}
	}
}

// The merged series counts every part's second k as one second: counts
// summed, percentiles those of all the second's latencies, the phase the
// marker's, and no histograms left on the points.
func TestMergeSeries(t *testing.T) {
	s := newSplit(t, 5000)
	docs, paths := s.docs(t, 3, 1, 2)
	var f fakeSummary
	d, err := Merge(docs, paths, f.options())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Series) != splitSeconds {
		t.Fatalf("%d seconds, want %d", len(d.Series), splitSeconds)
	}
	for i, pt := range d.Series {
		sec := i + 1
		want := latency.PercentilesOf(s.seconds[sec])
		if pt.T != float64(sec) || pt.Phase != "p1" || !slices.Equal(pt.Counts, s.counts[sec]) || *pt.Latency != *want || pt.InDoubt != splitParts {
			t.Errorf("second %d: %+v latency %+v, want counts %v latency %+v phase p1, %d in doubt", sec, pt, pt.Latency, s.counts[sec], want, splitParts)
		}
		if pt.Wait == nil || pt.Histogram != "" || pt.WaitHistogram != "" {
			t.Errorf("second %d: wait %v, histograms %q %q left on the point", sec, pt.Wait, pt.Histogram, pt.WaitHistogram)
		}
	}
	if got := f.got.Result.Pool.Waits; len(got) != splitSeconds || *got[0] != *d.Series[0].Wait {
		t.Errorf("the pool's waits %v, want the series'", got)
	}
}

// A missing part is refused, or, with AllowMissing, named in the first
// line with the share of the terminals the client figures cover.
func TestMergeMissing(t *testing.T) {
	s := newSplit(t, 1000)
	var f fakeSummary
	o := f.options()
	o.AllowMissing = true
	docs, paths := s.docs(t, 3, 1)
	d, err := Merge(docs, paths, o)
	if err != nil {
		t.Fatal(err)
	}
	want := "Part 2 of 3 is missing: the client figures cover only the present parts' 4 of 6 VUs, the database's all of them"
	if !slices.Equal(d.Parts.Missing, []int{2}) || !slices.Equal(d.Parts.Present, []int{1, 3}) || d.Lines[0] != want {
		t.Errorf("missing %v present %v first line %q, want %q", d.Parts.Missing, d.Parts.Present, d.Lines[0], want)
	}
	if !strings.HasPrefix(d.Lines[len(d.Lines)-1], "Parts 1, 3 of 3 on 2 hosts") || f.got.Terminals != 4 {
		t.Errorf("last line %q, terminals %d", d.Lines[len(d.Lines)-1], f.got.Terminals)
	}
	if x := f.got.End.Values[workload.Xacts]; x != 5000-30 {
		t.Errorf("end xacts %d, want 4970: only part 3's flushes are in", x)
	}
	docs, paths = s.docs(t, 2, 3)
	d, err = Merge(docs, paths, o)
	if err != nil {
		t.Fatal(err)
	}
	if d.Parts.Marker != 0 || d.Marks != nil || f.got.End.Values != nil || !strings.Contains(d.Lines[0], "no database figures") {
		t.Errorf("without the marker: marker %d marks %v, first line %q", d.Parts.Marker, d.Marks, d.Lines[0])
	}
}

// Documents that are not the parts of one run, run alike, each once, are
// refused in one line that names what differs.
func TestMergeRefusals(t *testing.T) {
	s := newSplit(t, 100)
	for _, c := range []struct {
		name   string
		ids    []int
		change func(d []*Document)
		want   string
	}{
		{"no part", []int{1, 2, 3}, func(d []*Document) { d[1].Part = nil }, "p2.json is not a part of a split run (no part section)"},
		{"run", []int{1, 2, 3}, func(d []*Document) { d[2].Part.RunID = "91aa0000-1111" },
			"p1.json and p3.json are from different runs: 7f3c1a2b… started 18:31:02, 91aa0000… started 18:31:02"},
		{"config", []int{1, 2, 3}, func(d []*Document) { rehash(d[2], "duration", "30s") },
			"p1.json and p3.json are parts of one run that differ: duration: 60s in part 1, 30s in part 3"},
		{"agreed", []int{1, 2, 3}, func(d []*Document) { d[1].Part.Agreed["lost_after"] = "1m0s"; rehash(d[1], "vus", 6) },
			"p1.json and p2.json are parts of one run that differ: lost_after: 30s in part 1, 1m0s in part 2"},
		{"config edited", []int{1, 2, 3}, func(d []*Document) { d[2].Config["duration"] = "30s" },
			"p3.json (part 3): duration 30s where part 1 has 60s: the configuration was edited after the run, and no longer hashes to part.config_sha256"},
		{"vus edited", []int{1, 2, 3}, func(d []*Document) { d[1].Config["vus"] = 12.0 }, "p2.json (part 2): vus 12 where part 1 has 6"},
		{"edited alike", []int{1, 2, 3}, func(d []*Document) {
			for _, p := range d {
				p.Config["vus"] = 12.0
			}
		}, "p1.json (part 1): config no longer hashes to part.config_sha256"},
		{"hash", []int{1, 2, 3}, func(d []*Document) { d[1].Part.ConfigSHA256 = "beef" }, "p2.json (part 2): config no longer hashes to part.config_sha256 ("},
		{"no agreed", []int{1, 2, 3}, func(d []*Document) { d[2].Part.Agreed = nil }, "p3.json (part 3): part.agreed is missing"},
		{"count", []int{1, 2, 3}, func(d []*Document) { d[2].Part.Of, d[2].Part.VUs = 4, 1 }, "part count: 3 in part 1, 4 in part 3"},
		{"count raised", []int{1, 2, 3}, func(d []*Document) { d[1].Transactions[0].Count += 100000 },
			"p2.json (part 2): transactions.t1.count is 1000"},
		{"count negative", []int{1, 2, 3}, func(d []*Document) { d[2].Transactions[1].Count = -5 },
			"p3.json (part 3): transactions.t2.count is -5: a count is never negative"},
		{"counter negative", []int{1, 2, 3}, func(d []*Document) { d[1].Counters["a"] = -1 }, "p2.json (part 2): counters.a is -1"},
		{"second negative", []int{1, 2, 3}, func(d []*Document) { d[1].Series[2].Counts[1] = -1 }, "p2.json (part 2): series at 3s: counts of t2 is -1"},
		{"vus", []int{1, 2, 3}, func(d []*Document) { d[1].Part.VUs = 200 }, "p2.json (part 2): part.vus is 200, but part 2 of 3's share of config.vus 6 is 2"},
		{"two markers", []int{1, 2, 3}, func(d []*Document) { d[2].Part.Marker = true },
			"p1.json (part 1) and p3.json (part 3) both claim the database's marks (part.marker)"},
		{"no marker", []int{1, 2, 3}, func(d []*Document) { d[0].Part.Marker = false; d[0].Marks = nil },
			"none of the 3 parts claims the database's marks (part.marker)"},
		{"marks unclaimed", []int{1, 2, 3}, func(d []*Document) { d[1].Marks = d[0].Marks },
			"p2.json (part 2): marks are the database's, read only by the part that took them, and part.marker is false"},
		{"schedule", []int{1, 2, 3}, func(d []*Document) { d[1].Part.Schedule.HoldMs = 900 }, "schedule: start 18:31:02.000, open 18:31:12.000, close 18:31:42.000, hold 500 ms in part 1, start"},
		{"schema", []int{1, 2, 3}, func(d []*Document) { d[1].SchemaVersion = 1 }, "schema version: 2 in part 1, 1 in part 2"},
		{"target", []int{1, 2, 3}, func(d []*Document) { d[1].Target.Version = "16.2" }, "target: postgres 15.18 in part 1, postgres 16.2 in part 2"},
		{"workload", []int{1, 2, 3}, func(d []*Document) { d[1].Workload = "v" }, "workload: w in part 1, v in part 2"},
		{"types", []int{1, 2, 3}, func(d []*Document) { d[2].SeriesTypes = []string{"t1"} }, "transaction types: t1, t2 in part 1, t1 in part 3"},
		{"primary", []int{1, 2, 3}, func(d []*Document) { d[2].PrimaryMetric = "secs" }, "primary metric: rate in part 1, secs in part 3"},
		{"twice", []int{1, 2, 3}, func(d []*Document) { d[2].Part.Index = 2 }, "part 2 given twice: p2.json, p3.json"},
		{"beyond", []int{1, 2, 3}, func(d []*Document) { d[2].Part.Index = 4 }, "p3.json: part 4 of 3 is no part of a run"},
		{"missing", []int{1, 2}, func([]*Document) {}, "part 3 of 3 is missing (no document: it died, or was not collected); --allow-missing merges the others"},
		{"missing two", []int{2}, func([]*Document) {}, "parts 1, 3 of 3 are missing"},
		{"none", nil, func([]*Document) {}, "merge: name the documents of a split run's parts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs, paths := s.docs(t, c.ids...)
			c.change(docs)
			var f fakeSummary
			_, err := Merge(docs, paths, f.options())
			var ue *exitcode.UserError
			if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one line (a user's error) with %q", err, c.want)
			}
			if f.got != nil {
				t.Error("Summarize called for a refused merge")
			}
		})
	}
}

// rehash sets key of d's configuration to v, and its hash to match, as a
// part run with other flags would have it.
func rehash(d *Document, key string, v any) {
	d.Config[key] = v
	d.Part.ConfigSHA256 = agreedHash(d.Config, d.Part.Agreed)
}

// A merged document writes and reads back as itself.
func TestMergedRoundTrip(t *testing.T) {
	d := mergedSample(t)
	path := filepath.Join(t.TempDir(), "all.json")
	if err := Write(path, d); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Parts == nil || len(back.Parts.Members) != 3 || back.Part != nil {
		t.Fatalf("read back: parts %+v part %+v", back.Parts, back.Part)
	}
	rereads(t, back, nil, ParseRun)
}

// mergedSample is a small merged document.
func mergedSample(t testing.TB) *Document {
	s := newSplit(t, 300)
	docs, paths := s.docs(t, 1, 2, 3)
	var f fakeSummary
	d, err := Merge(docs, paths, f.options())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// What happened to each part is the run's, named by part: its events
// (in time order among all the parts'), its notes but for the part note,
// its stalls and errors by class, and its interruption; and edges
// further apart than half the hold are named.
func TestMergeNotes(t *testing.T) {
	s := newSplit(t, 100)
	docs, paths := s.docs(t, 1, 2, 3)
	docs[0].Events = []Event{{T: 20, What: "server killed"}}
	docs[1].Events = []Event{{T: 12, What: "server up again"}}
	docs[1].Interrupted = true
	docs[1].Notes = append(docs[1].Notes, "Stall from 12.0 s for 3.0 s")
	docs[1].Stalls = []Span{{At: 12, Seconds: 3}}
	docs[2].Stalls = []Span{{At: 5, Seconds: 1}}
	docs[1].ErrorClasses = map[string]int64{"retry": 2}
	docs[2].ErrorClasses = map[string]int64{"retry": 3, "other": 1}
	var f fakeSummary
	d, err := Merge(docs, paths, f.options())
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []Event{{T: 12, What: "part 2: server up again"}, {T: 20, What: "part 1: server killed"}}
	wantNotes := []string{"part 2 was interrupted 30 s into the window", "part 2: Stall from 12.0 s for 3.0 s"}
	if !slices.Equal(d.Events, wantEvents) || !slices.Equal(d.Notes, wantNotes) || !d.Interrupted || !d.Parts.Members[1].Interrupted {
		t.Errorf("events %v notes %q interrupted %v, want %v and %q", d.Events, d.Notes, d.Interrupted, wantEvents, wantNotes)
	}
	if want := []Span{{At: 5, Seconds: 1}, {At: 12, Seconds: 3}}; !slices.Equal(d.Stalls, want) {
		t.Errorf("stalls %v, want %v", d.Stalls, want)
	}
	docs, paths = s.docs(t, 1, 2, 3)
	docs[2].Part.WindowEnd = docs[2].Part.WindowEnd.Add(300 * time.Millisecond)
	var g fakeSummary
	late, err := Merge(docs, paths, g.options())
	if err != nil {
		t.Fatal(err)
	}
	want := "The parts' window edges fell up to 304.0 ms apart, more than half the 500 ms hold"
	if n := late.Notes; len(n) != 1 || !strings.HasPrefix(n[0], want) {
		t.Errorf("notes %q, want one that starts %q", n, want)
	}
	if c := d.ErrorClasses; c["retry"] != 5 || c["other"] != 1 || !reflect.DeepEqual(f.got.Result.ErrorClasses, c) {
		t.Errorf("errors by class %v, Summarize's %v", c, f.got.Result.ErrorClasses)
	}
}

// Merging a long run keeps no second's histograms once the second is
// merged: three parts of 5,000 seconds each (two histograms a second,
// 26 KB each decoded) merge in a heap of tens of MB, where keeping them
// took 560 MB (and a part of a day's run 22 GB).
func TestMergeMemory(t *testing.T) {
	const seconds = 5000
	s := newSplit(t, 3000)
	docs, paths := s.docs(t, 1, 2, 3)
	for _, d := range docs {
		pts := d.Series
		d.Series = make([]Point, seconds)
		for k := range d.Series {
			d.Series[k] = pts[k%len(pts)]
			d.Series[k].T = float64(k + 1)
		}
	}
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	runtime.GC()
	var f fakeSummary
	d, err := Merge(docs, paths, f.options())
	close(done)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Series) != seconds {
		t.Fatalf("%d seconds merged, want %d", len(d.Series), seconds)
	}
	t.Logf("the heap's peak: %d MB", peak.Load()>>20)
	if p := peak.Load(); p > 256<<20 {
		t.Errorf("the heap reached %d MB merging %d seconds, want under 256 MB", p>>20, seconds)
	}
}
