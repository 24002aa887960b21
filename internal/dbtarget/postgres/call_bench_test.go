//go:build linux

package postgres

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// BenchmarkCalls measures the client's CPU per call on the hot path of
// procs mode: 4 sessions, as a run's 4 VUs, each calling one prepared
// statement after another with the run's one context, on one P (a run
// has one per 8 VUs) unless GOMAXPROCS says otherwise. The server's work
// per call is a sum over a generated series of 1,000. It reports the
// test process's CPU per call, which is the client's, its threads'
// switches per call and the calls a second; then pgbench -M prepared
// runs the same statement as many times from as many clients on the same
// server, and its CPU and switches per call and the ratio of CPU are
// reported beside. Compare two builds by running this in turn with each:
//
//	go test -run '^$' -bench Calls -benchtime 20000x -count 3 ./internal/dbtarget/postgres/
func BenchmarkCalls(b *testing.B) {
	const sessions = 4
	if os.Getenv("GOMAXPROCS") == "" {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := pgtest.NewDB(b)
	tg, err := Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	const sql = "SELECT sum(g)::int8 FROM generate_series(1, $1::int) g"
	perCall := sessionCalls(ctx, b, tg, sessions, func(s dbtarget.Session, n int) error {
		return s.QueryRow(ctx, sql, n).Scan(new(int64))
	})
	if b.N < 100*sessions {
		return // the round that sizes b.N
	}
	if pg, pgsw := pgbenchPerCall(b, url, sessions, b.N); pg > 0 {
		b.ReportMetric(pg, "pgbench-µs/call")
		b.ReportMetric(pgsw, "pgbench-switches/call")
		b.ReportMetric(perCall/pg, "client/pgbench")
	}
}

// BenchmarkCallArgs is BenchmarkCalls with a call shaped as procs mode's
// New-Order: three ints, three arrays of int32 and a time in, an int and
// a float8 out; the server does little, so the figures are the client's
// work around a call: encoding, decoding, allocations.
//
//	go test -run '^$' -bench CallArgs -benchmem -benchtime 20000x ./internal/dbtarget/postgres/
func BenchmarkCallArgs(b *testing.B) {
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
	const sql = `SELECT $1::int + $2::int + $3::int + cardinality($4::int[]) + cardinality($5::int[]) + ($6::int[])[1],
		extract(epoch FROM $7::timestamp)::float8`
	items := []int32{104, 2003, 3302, 40001, 55555, 60606, 77777, 88888, 91919, 99999}
	supply, qty := make([]int32, len(items)), make([]int32, len(items))
	for i := range items {
		supply[i], qty[i] = 3, int32(i%10+1)
	}
	sessionCalls(ctx, b, tg, 4, func(s dbtarget.Session, n int) error {
		var id int
		var total float64
		return s.QueryRow(ctx, sql, 3, 7, 2011+n%1000, items, supply, qty, time.Now()).Scan(&id, &total)
	})
}

// sessionCalls runs b.N calls of call on sessions sessions of tg, each
// started with the run's context, and reports the process's CPU and
// thread switches per call, which are the client's, and the calls a
// second; it returns the CPU per call in µs.
func sessionCalls(ctx context.Context, b *testing.B, tg dbtarget.Target, sessions int, call func(s dbtarget.Session, n int) error) float64 {
	var wg sync.WaitGroup
	ready, start := make(chan error, sessions), make(chan struct{})
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := tg.Session(ctx)
			if err == nil {
				defer s.Close()
				err = call(s, 10)
			}
			ready <- err
			<-start
			for j := i; err == nil && j < b.N; j += sessions {
				if err = call(s, 1000); err != nil {
					b.Error(err)
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
	cpu0, sw0, began := processCPU(), switches(), time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	cpu, sw, took := processCPU()-cpu0, switches()-sw0, time.Since(began)
	perCall := float64(cpu.Microseconds()) / float64(b.N)
	b.ReportMetric(perCall, "client-µs/call")
	b.ReportMetric(float64(sw)/float64(b.N), "switches/call")
	b.ReportMetric(float64(b.N)/took.Seconds(), "calls/s")
	return perCall
}

// switches is how many times this process's threads have been switched
// out, of their own accord or not.
func switches() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Nvcsw + ru.Nivcsw
}

// pgbenchPerCall runs BenchmarkCalls' statement calls times from clients
// with pgbench -M prepared, on two threads as bench/tprocc runs it, and
// returns its CPU per call in µs and its threads' switches per call; 0
// when there is no pgbench beside the server's binaries.
func pgbenchPerCall(b *testing.B, url string, clients, calls int) (cpuMicros, switches float64) {
	bin, err := pgtest.Start(b).Bin()
	if err != nil {
		b.Fatal(err)
	}
	pgbench := filepath.Join(bin, "pgbench")
	if _, err := os.Stat(pgbench); err != nil {
		b.Logf("no pgbench reference: %v", err)
		return 0, 0
	}
	script := filepath.Join(b.TempDir(), "call.sql")
	if err := os.WriteFile(script, []byte("SELECT sum(g)::int8 FROM generate_series(1, 1000) g;\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(pgbench, "-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", "2",
		"-t", strconv.Itoa(calls/clients), "-f", script, url)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	n := float64(calls / clients * clients)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return float64(cpu.Microseconds()) / n, float64(ru.Nvcsw+ru.Nivcsw) / n
}
