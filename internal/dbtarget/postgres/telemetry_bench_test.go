//go:build linux

package postgres

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

// BenchmarkSessionSampler10Hz measures what the session sampler costs the
// server: one op is one sample, taken every 100 ms as a run takes them,
// while 8 sessions keep the server's CPUs busy. It reports the sampler
// backend's own CPU time (utime+stime from /proc, which counts in ticks
// of 10 ms), per sample and as a share of one server core at 10 Hz, and
// the CPU time of this whole test process, which does little else than
// sample. A minute, as the acceptance asks:
//
//	go test -run '^$' -bench SessionSampler10Hz -benchtime 600x ./internal/dbtarget/postgres/
func BenchmarkSessionSampler10Hz(b *testing.B) {
	url := pgtest.NewDB(b)
	const busy = 8
	keepBusy(b, url, busy)
	ctx := context.Background()
	src := openSource(b, url)
	var pid uint32
	src.sampler.do(ctx, func(_ context.Context, c *pgx.Conn) error {
		pid = c.PgConn().PID()
		return nil
	})
	seen := 0
	// The first samples prepare the statement and warm the connection.
	for range 10 {
		ss, err := src.Sessions(ctx)
		if err != nil {
			b.Fatal(err)
		}
		seen = len(ss)
	}
	if seen < busy {
		b.Fatalf("the sampler saw %d sessions, want the %d busy ones", seen, busy)
	}

	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	backend0, client0 := backendCPU(b, pid), processCPU()
	b.ResetTimer()
	for range b.N {
		<-tick.C
		if _, err := src.Sessions(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	backend, client := backendCPU(b, pid)-backend0, processCPU()-client0
	b.ReportMetric(float64(backend.Microseconds())/float64(b.N), "backend-µs/sample")
	b.ReportMetric(100*backend.Seconds()/(float64(b.N)/10), "backend-%core@10Hz")
	b.ReportMetric(float64(client.Microseconds())/float64(b.N), "client-µs/sample")
	b.ReportMetric(100*client.Seconds()/(float64(b.N)/10), "client-%core@10Hz")
}

// keepBusy has n sessions keep the server's CPUs busy until the benchmark
// ends.
func keepBusy(b *testing.B, url string, n int) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	for range n {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer c.Close(context.Background())
			for ctx.Err() == nil {
				c.Exec(ctx, `DO $$ DECLARE x float8 := 0; BEGIN FOR i IN 1..100000000 LOOP x := x + i; END LOOP; END $$`)
			}
		}()
	}
}

// BenchmarkRecorder measures what recording telemetry costs the client:
// the whole recorder (host samples, this database's counters each second,
// and the sessions at 10 Hz or not at all) against a server that 8
// sessions keep busy. One op is one second of recording, counted from two
// seconds after the start, so that the one-time start (finding the
// devices, the frequency source, the settings) is reported apart. The
// figure is this process's CPU time over it, in milliseconds per second
// and as a share of one core, less the same process idling for as long
// (the busy sessions' connections and Go's own background work):
//
//	go test -run '^$' -bench Recorder -benchtime 20x ./internal/dbtarget/postgres/
func BenchmarkRecorder(b *testing.B) {
	url := pgtest.NewDB(b)
	keepBusy(b, url, 8)
	const warm = 2 * time.Second
	for _, hz := range []float64{0, telemetry.DefaultSessionHz} {
		b.Run(fmt.Sprintf("sessions-%gHz", hz), func(b *testing.B) {
			wall := time.Duration(b.N) * time.Second
			idle0 := processCPU()
			time.Sleep(wall)
			idle := processCPU() - idle0
			src := openSource(b, url)
			start0 := processCPU()
			b.ResetTimer()
			rec := telemetry.Start(context.Background(), telemetry.Config{Interval: time.Second, SessionHz: hz}, src, time.Now())
			start := processCPU() - start0
			time.Sleep(warm)
			cpu0 := processCPU()
			time.Sleep(wall)
			used := processCPU() - cpu0 - idle
			r := rec.Stop()
			b.StopTimer()
			if n := b.N + int(warm/time.Second) - 1; len(r.Host.Samples) < n || len(r.DB.Samples) < n {
				b.Fatalf("%d host and %d database samples in %d s", len(r.Host.Samples), len(r.DB.Samples), b.N)
			}
			b.ReportMetric(float64(start.Microseconds())/1000, "start-ms")
			b.ReportMetric(float64(used.Microseconds())/1000/wall.Seconds(), "client-ms/s")
			b.ReportMetric(100*used.Seconds()/wall.Seconds(), "client-%core")
		})
	}
}

// backendCPU is a process's user and system time from /proc/PID/stat,
// which counts in USER_HZ ticks: 100 a second on Linux, whatever the
// kernel's own rate.
func backendCPU(b *testing.B, pid uint32) time.Duration {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("the sampler's backend is not on this host: %v", err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	// utime and stime are fields 14 and 15 of stat, 12 and 13 after the
	// command.
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
