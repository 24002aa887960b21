//go:build linux

package postgres

import (
	"context"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// BenchmarkCalls measures the client's CPU per call on the hot path of
// procs mode: 4 sessions, as a run's 4 VUs, each calling one prepared
// statement after another with the run's one context, on one P (a run
// has one per 8 VUs) unless GOMAXPROCS says otherwise. The server's work per call is about that of a
// Payment (a sum over a generated series). It reports the test process's
// CPU per call, which is the client's, and the calls a second; compare
// two builds by running this in turn with each:
//
//	go test -run '^$' -bench Calls -benchtime 20000x -count 3 ./internal/dbtarget/postgres/
func BenchmarkCalls(b *testing.B) {
	const sessions = 4
	if os.Getenv("GOMAXPROCS") == "" {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tg, err := Open(ctx, pgtest.NewDB(b))
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	const sql = "SELECT sum(g)::int8 FROM generate_series(1, $1::int) g"
	var wg sync.WaitGroup
	ready, start := make(chan error, sessions), make(chan struct{})
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := tg.Session(ctx)
			if err == nil {
				defer s.Close()
				err = s.QueryRow(ctx, sql, 10).Scan(new(int64))
			}
			ready <- err
			<-start
			var n int64
			for j := i; j < b.N; j += sessions {
				if err := s.QueryRow(ctx, sql, 1000).Scan(&n); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	for range sessions {
		if err := <-ready; err != nil {
			close(start)
			b.Fatal(err)
		}
	}
	cpu0, began := processCPU(), time.Now()
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	cpu, took := processCPU()-cpu0, time.Since(began)
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "client-µs/call")
	b.ReportMetric(float64(b.N)/took.Seconds(), "calls/s")
}
