package exporter

import (
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var _ driver.Observer = (*Run)(nil)

// latencyBuckets run from 100 µs, an embedded database's quickest
// transaction, to 13 s, doubling: a factor of two is as fine as a
// histogram_quantile over classic buckets can usefully be.
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 2, 18)

// Run is one run's live metrics. Each per-type series is resolved once,
// here, so that a transaction costs a few atomic adds and no lookup.
type Run struct {
	done, rollbacks, errors, inDoubt, retries []prometheus.Counter
	latency                                   []prometheus.Observer
	phases                                    [driver.PhaseDone + 1]prometheus.Gauge
	vus                                       prometheus.Gauge
	// headline is nil unless the workload can rate one second's work.
	headline prometheus.Gauge
	rates    workload.Rater
	primary  string
}

// Follow makes the live metrics of r, an opened run of a workload that
// declares info, and serves them in place of the previous run's, whose
// series a dashboard should not mistake for this one's. labels, which may
// be nil, go on every series of the run: a sweep's point.
func (s *Server) Follow(info workload.Info, r workload.Run, labels map[string]string) *Run {
	reg := prometheus.NewRegistry()
	f := promauto.With(prometheus.WrapRegistererWith(labels, reg))
	byType := func(name, help string) []prometheus.Counter {
		vec := f.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"type"})
		out := make([]prometheus.Counter, len(r.TxNames()))
		for i, n := range r.TxNames() {
			out[i] = vec.WithLabelValues(n)
		}
		return out
	}
	run := &Run{
		done:      byType("dbrig_transactions_total", "Transactions completed (committed, or rolled back as the workload intends), all phases."),
		rollbacks: byType("dbrig_rollbacks_total", "Transactions rolled back as the workload intends, all phases."),
		errors:    byType("dbrig_errors_total", "Transactions that failed after any retries, all phases."),
		inDoubt:   byType("dbrig_in_doubt_total", "Transactions in doubt: their commit was sent and the connection lost before its answer, all phases."),
		retries:   byType("dbrig_retries_total", "Retries of transactions after a retryable error, all phases."),
		vus:       f.NewGauge(prometheus.GaugeOpts{Name: "dbrig_vus", Help: "Virtual users running."}),
		primary:   info.Primary,
	}
	lat := f.NewHistogramVec(prometheus.HistogramOpts{
		Name: "dbrig_transaction_duration_seconds", Help: "Latency of completed transactions, retries included, all phases.",
		Buckets: latencyBuckets,
	}, []string{"type"})
	for _, n := range r.TxNames() {
		run.latency = append(run.latency, lat.WithLabelValues(n))
	}
	phase := f.NewGaugeVec(prometheus.GaugeOpts{
		Name: "dbrig_phase", Help: "1 for the run's current phase, 0 for the others.",
	}, []string{"phase"})
	for p := range run.phases {
		run.phases[p] = phase.WithLabelValues(driver.Phase(p).String())
	}
	if rt, ok := r.(workload.Rater); ok {
		m, _ := info.Metric(info.Primary)
		run.rates = rt
		run.headline = f.NewGauge(prometheus.GaugeOpts{
			Name: "dbrig_headline", Help: "The workload's primary metric over the last second.",
			ConstLabels: prometheus.Labels{"metric": m.Key, "unit": m.Unit},
		})
	}
	s.run.Store(reg)
	return run
}

// Phase marks p as the current phase.
func (r *Run) Phase(p driver.Phase) {
	for q, g := range r.phases {
		if driver.Phase(q) != p {
			g.Set(0)
		}
	}
	r.phases[p].Set(1)
}

// Transaction counts one transaction; the driver calls it from every VU.
func (r *Run) Transaction(tx int, took time.Duration, retries int, o driver.Outcome) {
	if retries > 0 {
		r.retries[tx].Add(float64(retries))
	}
	switch o {
	case driver.Failed:
		r.errors[tx].Inc()
		return
	case driver.InDoubt:
		r.inDoubt[tx].Inc()
		return
	}
	r.done[tx].Inc()
	if o == driver.RolledBack {
		r.rollbacks[tx].Inc()
	}
	r.latency[tx].Observe(took.Seconds())
}

// Tick takes the second's figures the driver reports.
func (r *Run) Tick(tk driver.Tick) {
	r.vus.Set(float64(tk.VUs))
	if r.headline == nil {
		return
	}
	if v, ok := r.rates.Rates(tk.Counts)[r.primary]; ok {
		r.headline.Set(v)
	}
}
