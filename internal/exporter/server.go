// Package exporter serves a run's figures as Prometheus metrics while it runs,
// for a dashboard to watch a long run or a sweep as it goes. The result
// document stays the record; these are a window onto it.
//
// Every series counts all phases; dbrig_phase says which one is current:
//
//	dbrig_transactions_total{type}            completed: committed, or rolled back as the workload intends
//	dbrig_rollbacks_total{type}               of those, the intended rollbacks
//	dbrig_errors_total{type}                  failed, after any retries
//	dbrig_retries_total{type}                 retries of retryable errors
//	dbrig_transaction_duration_seconds{type}  latency of completed transactions, retries included
//	dbrig_phase{phase}                        1 for the current phase (ramp-up, measure, done), 0 for the others
//	dbrig_vus                                 virtual users running
//	dbrig_headline{metric,unit}               the workload's primary metric over the last second
//
// plus the Go runtime's and the process's own. The phase is a gauge per
// state, as kube-state-metrics shows a pod's phase, so that
// dbrig_phase{phase="measure"} == 1 selects the measured window in a
// query. The headline is there only for a workload whose Run is a
// workload.Rater. In a sweep every series also carries the point, its
// parameters and the repetition.
//
// It knows no workload and no database by name.
package exporter

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Server serves /metrics: the process's own metrics from the start, and
// the current run's while there is one.
type Server struct {
	addr string
	srv  *http.Server
	run  atomic.Pointer[prometheus.Registry]
}

// Listen binds addr at once, so that a port in use stops a command before
// it has run anything, and serves on it until Close. An address without a
// host listens on loopback only: what a run exposes is nobody else's
// business unless the user says so.
func Listen(addr string) (*Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("want HOST:PORT or :PORT, got %q", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s is already in use; name another port", net.JoinHostPort(host, port))
	}
	if err != nil {
		return nil, err
	}
	s := &Server{addr: ln.Addr().String()}
	own := prometheus.NewRegistry()
	own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(prometheus.Gatherers{own, prometheus.GathererFunc(s.gatherRun)}, promhttp.HandlerOpts{}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Addr is the address the server listens on, with the port it got.
func (s *Server) Addr() string { return s.addr }

// Close stops serving; a scrape in progress is cut off.
func (s *Server) Close() error { return s.srv.Close() }

func (s *Server) gatherRun() ([]*dto.MetricFamily, error) {
	if r := s.run.Load(); r != nil {
		return r.Gather()
	}
	return nil, nil
}
