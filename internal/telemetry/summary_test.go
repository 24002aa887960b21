package telemetry

import (
	"encoding/json"
	"testing"
)

// TestSummarizeWindowOnly: samples before the window (ramp-up) and after
// it are left out, and means are weighted by each interval's length.
func TestSummarizeWindowOnly(t *testing.T) {
	server := 10.0
	r := &Recording{
		Window: [2]float64{10, 13},
		Host: &HostRecord{Facts: HostFacts{DataDevice: "vdb"}, Samples: []HostSample{
			{T: 9, DT: 1, CPU: CPUTimes{User: 100}},  // ramp-up
			{T: 10, DT: 1, CPU: CPUTimes{User: 100}}, // the start edge's own interval
			{T: 12, DT: 2, CPU: CPUTimes{User: 30, Idle: 70}, Client: 5, // in
				Disks: []DiskRates{{Device: "vda", ReadIOPS: 1000}, {Device: "vdb", ReadIOPS: 100, ReadAwaitMs: 1}}},
			{T: 13, DT: 1, CPU: CPUTimes{User: 60, Idle: 40}, Client: 20, Server: &server, // in
				Disks: []DiskRates{{Device: "vdb", ReadIOPS: 400, ReadAwaitMs: 0.5}}},
			{T: 14, DT: 1, CPU: CPUTimes{User: 0, Idle: 100}}, // after
		}},
		DB: &DBRecord{Samples: []DBSample{
			{T: 9, Counters: map[string]float64{LogicalReads: 0, PhysicalReads: 0}},
			{T: 10, Counters: map[string]float64{LogicalReads: 100, PhysicalReads: 10, DatabaseBytes: 5}},
			{T: 13, Counters: map[string]float64{LogicalReads: 1100, PhysicalReads: 60, DatabaseBytes: 7, Commits: 3}},
			{T: 14, Counters: map[string]float64{LogicalReads: 9999, PhysicalReads: 9999}},
		}},
	}
	s := Summarize(r)
	if s.Seconds != 3 {
		t.Fatalf("window %v s, want 3", s.Seconds)
	}
	h := s.Host
	if !near(h.CPU.Busy(), 40) { // (30*2 + 60*1) / 3
		t.Errorf("busy %v, want 40", h.CPU.Busy())
	}
	if !near(h.Client, 10) {
		t.Errorf("client %v, want 10", h.Client)
	}
	if h.Server == nil || !near(*h.Server, 10.0/3) {
		t.Errorf("server %v, want %v", h.Server, 10.0/3)
	}
	if h.Data == nil || h.Data.Device != "vdb" {
		t.Fatalf("data disk %+v, want vdb", h.Data)
	}
	if !near(h.Data.ReadIOPS, 200) { // (100*2 + 400*1) / 3
		t.Errorf("vdb reads/s %v, want 200", h.Data.ReadIOPS)
	}
	// 200 reads at 1 ms and 400 at 0.5 ms: 0.6667 ms per read.
	if !near(h.Data.ReadAwaitMs, 400.0/600) {
		t.Errorf("vdb await %v, want %v", h.Data.ReadAwaitMs, 400.0/600)
	}
	d := s.DB
	if d == nil || d.Deltas[LogicalReads] != 1000 || d.Rates[PhysicalReads] != 50.0/3 {
		t.Fatalf("db %+v", d)
	}
	if _, ok := d.Deltas[Commits]; ok {
		t.Errorf("a counter missing at the start has no delta: %v", d.Deltas)
	}
	if d.Gauges[DatabaseBytes] != 7 || d.HitPct == nil || !near(*d.HitPct, 95) {
		t.Errorf("gauges %v hit %v", d.Gauges, d.HitPct)
	}
}

func TestSummarizeSessions(t *testing.T) {
	r := &Recording{Window: [2]float64{1, 3}, DB: &DBRecord{Sessions: &SessionHistory{Hz: 10, Buckets: []SessionBucket{
		{T: 1, Samples: 10, Counts: map[string]int{"Lock/tuple": 50}},
		{T: 2, Samples: 10, Counts: map[string]int{"CPU/CPU": 15, "IO/DataFileRead": 5}, Queries: map[string]int{"7": 20}},
		{T: 3, Samples: 10, Counts: map[string]int{"CPU/CPU": 5, "IO/DataFileRead": 15}},
	}}}}
	s := Summarize(r)
	if !near(s.ActiveSessions, 2) {
		t.Errorf("AAS %v, want 2", s.ActiveSessions)
	}
	if len(s.Waits) != 2 || s.Waits[0].Name != "CPU/CPU" || s.Waits[0].Pct != 50 || s.Waits[1].Class() != "IO" {
		t.Errorf("waits %+v", s.Waits)
	}
	if len(s.TopQueries) != 1 || s.TopQueries[0].Count != 20 {
		t.Errorf("queries %+v", s.TopQueries)
	}
}

// TestSummarizeBackground: the server's own processes, recorded apart
// from the foreground sessions, stay out of database time and are
// summarized as shares of the readings; a document recorded before they
// were told apart (no "background") reads as it did.
func TestSummarizeBackground(t *testing.T) {
	var rec Recorder
	rec.count([]Session{
		{Class: "IO", Event: "DataFileRead", Backend: "client backend"},
		{Class: "Timeout", Event: "CheckpointWriteDelay", Backend: "checkpointer", Background: true},
		{Class: "CPU", Event: "CPU", Backend: "autovacuum worker", Background: true, QueryID: "9"},
	})
	b := rec.bucket
	if b.Counts["IO/DataFileRead"] != 1 || len(b.Counts) != 1 || len(b.Queries) != 0 ||
		b.Background["checkpointer"]["Timeout/CheckpointWriteDelay"] != 1 || b.Background["autovacuum worker"]["CPU/CPU"] != 1 {
		t.Fatalf("bucket %+v: want the client's wait in Counts, the others by kind in Background", b)
	}
	doc := `{"window": [0, 2], "db": {"samples": [], "sessions": {"hz": 10, "buckets": [
		{"t": 1, "samples": 10, "counts": {"CPU/CPU": 10, "IO/DataFileRead": 10},
		 "background": {"checkpointer": {"Timeout/CheckpointWriteDelay": 9, "IO/DataFileSync": 1}}},
		{"t": 2, "samples": 10, "counts": {"CPU/CPU": 20},
		 "background": {"checkpointer": {"Timeout/CheckpointWriteDelay": 7}, "autovacuum worker": {"Timeout/VacuumDelay": 2}}}]}}}`
	var r Recording
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatal(err)
	}
	s := Summarize(&r)
	if !near(s.ActiveSessions, 2) || len(s.Waits) != 2 || s.Waits[0].Name != "CPU/CPU" || !near(s.Waits[0].Pct, 75) {
		t.Errorf("AAS %v, waits %+v: want the foreground's 40 sightings alone", s.ActiveSessions, s.Waits)
	}
	want := []BackgroundWait{
		{"checkpointer", Wait{Name: "Timeout/CheckpointWriteDelay", Count: 16, Pct: 80, AAS: 0.8}},
		{"autovacuum worker", Wait{Name: "Timeout/VacuumDelay", Count: 2, Pct: 10, AAS: 0.1}},
		{"checkpointer", Wait{Name: "IO/DataFileSync", Count: 1, Pct: 5, AAS: 0.05}},
	}
	if len(s.Background) != len(want) {
		t.Fatalf("background %+v, want %+v", s.Background, want)
	}
	for i, w := range want {
		g := s.Background[i]
		if g.Backend != w.Backend || g.Name != w.Name || g.Count != w.Count || !near(g.Pct, w.Pct) || !near(g.AAS, w.AAS) {
			t.Errorf("background row %d %+v, want %+v", i, g, w)
		}
	}
	old := `{"window": [0, 1], "db": {"samples": [], "sessions": {"hz": 10, "buckets": [
		{"t": 1, "samples": 10, "counts": {"CPU/CPU": 10, "CPU/BCPU": 5, "Timeout/CheckpointWriteDelay": 5}}]}}}`
	r = Recording{}
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	if s := Summarize(&r); len(s.Waits) != 3 || s.Background != nil || !near(s.ActiveSessions, 2) {
		t.Errorf("an older document: waits %+v, background %+v", s.Waits, s.Background)
	}
}

func TestDiff(t *testing.T) {
	start := []Table{{Name: "top", Rows: []Row{{Labels: []string{"a"}, Values: []float64{1, 10}}, {Labels: []string{"b"}, Values: []float64{5, 5}}}}}
	end := []Table{{Name: "top", Rows: []Row{
		{Labels: []string{"a"}, Values: []float64{4, 30}, Text: "select"},
		{Labels: []string{"b"}, Values: []float64{5, 5}},
		{Labels: []string{"c"}, Values: []float64{2, 2}},
	}}}
	got := Diff(start, end)
	if len(got) != 1 || len(got[0].Rows) != 2 {
		t.Fatalf("diff %+v", got)
	}
	if a := got[0].Rows[0]; a.Values[0] != 3 || a.Values[1] != 20 || a.Text != "select" {
		t.Errorf("row a %+v", a)
	}
	if c := got[0].Rows[1]; c.Labels[0] != "c" || c.Values[0] != 2 {
		t.Errorf("a new row counts from zero: %+v", c)
	}
}

// TestSummarizeAcrossACrash: a server restarted after a crash forgets its
// statistics, so its counters start again from zero mid-window. What they
// counted since is added to what they had counted before, never
// subtracted from it.
func TestSummarizeAcrossACrash(t *testing.T) {
	r := &Recording{Window: [2]float64{10, 14}, DB: &DBRecord{Samples: []DBSample{
		{T: 10, Counters: map[string]float64{LogicalReads: 1000}},
		{T: 11, Counters: map[string]float64{LogicalReads: 1500}},
		{T: 12, Counters: map[string]float64{LogicalReads: 40}}, // restarted
		{T: 14, Counters: map[string]float64{LogicalReads: 240}},
	}}}
	d := Summarize(r).DB
	if d == nil || d.Deltas[LogicalReads] != 740 || d.Rates[LogicalReads] != 185 {
		t.Fatalf("db %+v, want 500 + 40 + 200 logical reads over 4 s", d)
	}
}

func TestDiffAcrossACrash(t *testing.T) {
	start := []Table{{Name: "top", Rows: []Row{{Labels: []string{"a"}, Values: []float64{100, 10}}}}}
	end := []Table{{Name: "top", Rows: []Row{{Labels: []string{"a"}, Values: []float64{7, 30}}}}}
	got := Diff(start, end)
	if v := got[0].Rows[0].Values; v[0] != 7 || v[1] != 20 {
		t.Errorf("diff %v, want 7 counted from zero after the reset, and 20", v)
	}
}
