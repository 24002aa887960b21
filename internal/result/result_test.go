package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/workload"
)

func sampleRun() Run {
	h := latency.NewHistogram()
	for i := 1; i <= 100; i++ {
		latency.Record(h, time.Duration(i)*time.Millisecond)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rate := 1234.5
	return Run{
		Workload: "w",
		Info: workload.Info{Metrics: []workload.Metric{{Key: "rate", Label: "rate", HigherIsBetter: true}, {Key: "secs", Label: "seconds"}},
			Primary: "rate", PrimaryTx: "t1"},
		Target: Target{Kind: "postgres", Version: "15.18", URL: "postgres://bob:xxxxx@db/x"},
		Config: map[string]any{"vus": 4},
		Result: &driver.Result{
			Started: start, WindowStart: start.Add(10 * time.Second), WindowEnd: start.Add(40 * time.Second),
			Tx:     []driver.TxResult{{Name: "t1", Count: 100, Hist: h}},
			Tally:  driver.Tally{7, 3},
			Series: []driver.Point{{T: 1, Phase: "measure", Counts: []int64{5}}},
		},
		Summary:    workload.Summary{Values: map[string]workload.Value{"rate": {DB: &rate, Client: workload.Known(1230)}, "secs": {Client: workload.Known(2)}}},
		TxNames:    []string{"t1"},
		TallyNames: []string{"a", "b"},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	d, err := FromRun(sampleRun())
	if err != nil {
		t.Fatal(err)
	}
	if d.WindowSeconds != 30 {
		t.Errorf("window = %v, want 30", d.WindowSeconds)
	}
	if pm := d.Transactions[0].PerMinute; pm != 200 {
		t.Errorf("per minute = %v, want 200 (100 in 30 s)", pm)
	}
	if d.Counters["a"] != 7 || d.Counters["b"] != 3 {
		t.Errorf("counters = %v", d.Counters)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "r.json")
	if err := Write(path, d); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("write left %d files, want only the document", len(entries))
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	rate, _ := back.Metric("rate")
	secs, _ := back.Metric("secs")
	if back.SchemaVersion != SchemaVersion || back.Workload != "w" || rate.Value() != 1234.5 || *rate.Client != 1230 ||
		secs.DB != nil || secs.Value() != 2 || secs.HigherIsBetter || back.PrimaryMetric != "rate" || back.PrimaryTx != "t1" ||
		back.Transactions[0].Latency != d.Transactions[0].Latency || back.Target != d.Target {
		t.Errorf("round trip changed the document:\n%+v\n%+v", back, d)
	}
	hist, err := latency.Decode(back.Transactions[0].Histogram)
	if err != nil || hist.TotalCount() != 100 {
		t.Errorf("histogram did not survive: %v, %v", err, hist)
	}
}

func TestReadRefusesOtherVersionsAndJunk(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"newer.json": `{"schema_version": 99}`,
		"none.json":  `{"workload": "x"}`,
		"junk.json":  `not json`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Read(p); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want an error naming the file", name, err)
		}
	}
}
