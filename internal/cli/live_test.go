package cli_test

import (
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// freeAddr is a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// scrape reads and parses addr's /metrics.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return fams
}

// series is the one metric of fams[name] whose label is value, or nil.
func series(fams map[string]*dto.MetricFamily, name, label, value string) *dto.Metric {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				return m
			}
		}
	}
	return nil
}

// TestLiveMetricsSQLite scrapes a run of the embedded default while it is
// in its measured window. It changes the working directory, so it must
// not run in parallel.
func TestLiveMetricsSQLite(t *testing.T) {
	t.Chdir(t.TempDir())
	addr := freeAddr(t)
	done := make(chan outcome, 1)
	go func() {
		done <- dbrig(t, "run", "tproc-c", "--rampup", "1s", "--duration", "5s", "--metrics-addr", addr)
	}()
	phase := func(f map[string]*dto.MetricFamily, p string) float64 {
		return series(f, "dbrig_phase", "phase", p).GetGauge().GetValue()
	}
	var first map[string]*dto.MetricFamily
	for first == nil {
		select {
		case o := <-done:
			t.Fatalf("the run ended (exit %d) before any scrape saw its measured window", o.code)
		case <-time.After(200 * time.Millisecond):
		}
		if f := scrape(t, addr); phase(f, "measure") == 1 {
			first = f
		}
	}
	time.Sleep(time.Second)
	second := scrape(t, addr)

	if phase(second, "measure") != 1 || phase(second, "ramp-up") != 0 || phase(second, "done") != 0 {
		t.Errorf("phases measure %v, ramp-up %v, done %v; want only measure at 1",
			phase(second, "measure"), phase(second, "ramp-up"), phase(second, "done"))
	}
	count := func(f map[string]*dto.MetricFamily, family, tx string) float64 {
		return series(f, family, "type", tx).GetCounter().GetValue()
	}
	for _, tx := range []string{"new_order", "payment", "order_status", "delivery", "stock_level"} {
		before, after := count(first, "dbrig_transactions_total", tx), count(second, "dbrig_transactions_total", tx)
		if before <= 0 || after <= before {
			t.Errorf("%s: %v transactions, then %v a second later; want more than none, growing", tx, before, after)
		}
		if rb := count(second, "dbrig_rollbacks_total", tx); rb > after {
			t.Errorf("%s: %v intended rollbacks of %v transactions", tx, rb, after)
		}
		for _, family := range []string{"dbrig_errors_total", "dbrig_retries_total"} {
			if series(second, family, "type", tx) == nil {
				t.Errorf("%s: no %s series", tx, family)
			}
		}
		h := series(second, "dbrig_transaction_duration_seconds", "type", tx).GetHistogram()
		if h.GetSampleCount() == 0 || h.GetSampleSum() <= 0 {
			t.Errorf("%s: latency histogram of %d samples summing to %v s; want some", tx, h.GetSampleCount(), h.GetSampleSum())
		}
	}
	if nopm := series(second, "dbrig_headline", "metric", "nopm"); nopm.GetGauge().GetValue() <= 0 {
		t.Errorf("headline nopm = %v, want > 0", nopm)
	}
	if vus := second["dbrig_vus"].GetMetric(); len(vus) != 1 || vus[0].GetGauge().GetValue() <= 0 {
		t.Errorf("dbrig_vus = %v, want the running virtual users", vus)
	}
	if second["go_goroutines"] == nil || second["process_cpu_seconds_total"] == nil {
		t.Error("no Go runtime or process metrics")
	}

	if o := <-done; o.code != 0 {
		t.Fatalf("run: exit %d", o.code)
	}
	// The server stops with the run, freeing its port.
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the metrics port is still taken after the run: %v", err)
	}
	l.Close()
}

// TestMetricsAddrInUseSQLite: a port in use is the user's to change, and
// is found before anything is built or run.
func TestMetricsAddrInUseSQLite(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	msg := usageError(t, dbrig(t, "run", "tproc-c", "--target", "sqlite:"+db, "--metrics-addr", ":"+port,
		"--json", filepath.Join(dir, "r.json")))
	wantIn(t, "port in use", msg, "127.0.0.1:"+port+" is already in use")
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the target was opened before the port was bound: %v", err)
	}
}

// TestSweepLiveMetricsSQLite: one server follows a whole sweep, each run's
// series labelled with its point, and replaced by the next run's.
func TestSweepLiveMetricsSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := sqliteSweep(t, dir, "2s")
	addr := freeAddr(t)
	done := make(chan outcome, 1)
	go func() { done <- dbrig(t, "sweep", spec, "--out", filepath.Join(dir, "out"), "--metrics-addr", addr) }()
	for {
		select {
		case o := <-done:
			t.Fatalf("the sweep ended (exit %d) before a scrape saw point 2 measured", o.code)
		case <-time.After(200 * time.Millisecond):
		}
		f := scrape(t, addr)
		m := series(f, "dbrig_phase", "point", "2")
		if m == nil {
			continue
		}
		if series(f, "dbrig_phase", "point", "1") != nil {
			t.Error("point 1's series are still served while point 2 runs")
		}
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if want := map[string]string{"params": "vus=2", "phase": labels["phase"], "point": "2", "repetition": "1"}; !maps.Equal(labels, want) {
			t.Fatalf("labels %v, want %v", labels, want)
		}
		break
	}
	if o := <-done; o.code != 0 {
		t.Fatalf("sweep: exit %d", o.code)
	}
}
