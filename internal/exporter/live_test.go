package exporter

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// twoTypes stands in for an opened run: Follow asks it only for its
// transaction names and, as a Rater, for its rates.
type twoTypes struct{ workload.Run }

func (twoTypes) TxNames() []string { return []string{"order", "report"} }
func (twoTypes) Rates(counts []int64) map[string]float64 {
	return map[string]float64{"orders_per_minute": float64(counts[0]) * 60}
}

var info = workload.Info{
	Metrics: []workload.Metric{{Key: "orders_per_minute", Unit: "orders per minute", HigherIsBetter: true}},
	Primary: "orders_per_minute",
}

func listen(t testing.TB) *Server {
	t.Helper()
	s, err := Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestListen(t *testing.T) {
	if a := listen(t).Addr(); !strings.HasPrefix(a, "127.0.0.1:") {
		t.Errorf("a bare :PORT listens on %s, want loopback", a)
	}
	for _, addr := range []string{"9187", "127.0.0.1", "no-such-host.invalid:9187"} {
		if s, err := Listen(addr); err == nil {
			s.Close()
			t.Errorf("Listen(%q) listened on %s; want an error", addr, s.Addr())
		}
	}
}

// TestFollow: what the driver and the runner tell a run is what a scrape
// reads, under the run's labels, and the next run's series replace it.
func TestFollow(t *testing.T) {
	s := listen(t)
	url := "http://" + s.Addr() + "/metrics"
	r := s.Follow(info, twoTypes{}, map[string]string{"point": "1"})
	r.Phase(driver.PhaseRampup)
	r.Phase(driver.PhaseMeasure)
	r.Transaction(0, 3*time.Millisecond, 2, driver.Committed)
	r.Transaction(0, 50*time.Millisecond, 0, driver.RolledBack)
	r.Transaction(1, time.Second, 1, driver.Failed)
	r.Transaction(0, 2*time.Second, 0, driver.InDoubt)
	r.Tick(driver.Tick{Phase: driver.PhaseMeasure, VUs: 3, Counts: []int64{7, 1}})
	want := `
# HELP dbrig_transactions_total Transactions completed (committed, or rolled back as the workload intends), all phases.
# TYPE dbrig_transactions_total counter
dbrig_transactions_total{point="1",type="order"} 2
dbrig_transactions_total{point="1",type="report"} 0
# HELP dbrig_rollbacks_total Transactions rolled back as the workload intends, all phases.
# TYPE dbrig_rollbacks_total counter
dbrig_rollbacks_total{point="1",type="order"} 1
dbrig_rollbacks_total{point="1",type="report"} 0
# HELP dbrig_errors_total Transactions that failed after any retries, all phases.
# TYPE dbrig_errors_total counter
dbrig_errors_total{point="1",type="order"} 0
dbrig_errors_total{point="1",type="report"} 1
# HELP dbrig_in_doubt_total Transactions in doubt: their commit was sent and the connection lost before its answer, all phases.
# TYPE dbrig_in_doubt_total counter
dbrig_in_doubt_total{point="1",type="order"} 1
dbrig_in_doubt_total{point="1",type="report"} 0
# HELP dbrig_retries_total Retries of transactions after a retryable error, all phases.
# TYPE dbrig_retries_total counter
dbrig_retries_total{point="1",type="order"} 2
dbrig_retries_total{point="1",type="report"} 1
# HELP dbrig_phase 1 for the run's current phase, 0 for the others.
# TYPE dbrig_phase gauge
dbrig_phase{phase="done",point="1"} 0
dbrig_phase{phase="measure",point="1"} 1
dbrig_phase{phase="ramp-up",point="1"} 0
# HELP dbrig_vus Virtual users running.
# TYPE dbrig_vus gauge
dbrig_vus{point="1"} 3
# HELP dbrig_headline The workload's primary metric over the last second.
# TYPE dbrig_headline gauge
dbrig_headline{metric="orders_per_minute",point="1",unit="orders per minute"} 420
`
	names := []string{"dbrig_transactions_total", "dbrig_rollbacks_total", "dbrig_errors_total", "dbrig_in_doubt_total", "dbrig_retries_total",
		"dbrig_phase", "dbrig_vus", "dbrig_headline"}
	if err := testutil.ScrapeAndCompare(url, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	// Failed and in-doubt transactions have no latency; the others fall in
	// their buckets.
	fams, err := s.run.Load().Gather()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(fams, func(f *dto.MetricFamily) bool { return f.GetName() == "dbrig_transaction_duration_seconds" })
	if i < 0 {
		t.Fatal("no latency histogram")
	}
	// Per type: how many took at most 3.2 ms, at most 51.2 ms, in all.
	wantLat := map[string][3]uint64{"order": {1, 2, 2}, "report": {0, 0, 0}}
	for _, m := range fams[i].GetMetric() {
		h, tx := m.GetHistogram(), m.GetLabel()[1].GetValue()
		b := h.GetBucket()
		if got := [3]uint64{b[5].GetCumulativeCount(), b[9].GetCumulativeCount(), h.GetSampleCount()}; got != wantLat[tx] {
			t.Errorf("%s: %v under %v s, %v under %v s, %v in all; want %v",
				tx, got[0], b[5].GetUpperBound(), got[1], b[9].GetUpperBound(), got[2], wantLat[tx])
		}
	}

	s.Follow(info, twoTypes{}, map[string]string{"point": "2"})
	next := `
# HELP dbrig_vus Virtual users running.
# TYPE dbrig_vus gauge
dbrig_vus{point="2"} 0
`
	if err := testutil.ScrapeAndCompare(url, strings.NewReader(next), "dbrig_vus"); err != nil {
		t.Errorf("after the next run started: %v", err)
	}
}

// BenchmarkTransaction is what --metrics-addr adds to every transaction,
// from as many goroutines as there are Ps, as VUs call it.
func BenchmarkTransaction(b *testing.B) {
	r := listen(b).Follow(info, twoTypes{}, nil)
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			r.Transaction(i&1, time.Duration(i%4096)*time.Microsecond, 0, driver.Committed)
		}
	})
}
