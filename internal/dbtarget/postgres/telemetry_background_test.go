//go:build unix

package postgres

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

// TestTelemetryBackground records a window in which one client sleeps in
// pg_sleep and another writes enough WAL to request spread checkpoints
// (max_wal_size at its least): the checkpointer's writes and throttle
// sleeps are the server's own work, so they land in the background
// table, and database time holds the clients' waits alone.
func TestTelemetryBackground(t *testing.T) {
	s := pgtest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := s.Start(ctx, map[string]string{
		"max_wal_size": "32MB", "min_wal_size": "32MB", "checkpoint_completion_target": "0.9", "autovacuum": "off",
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDB(ctx, "bg"); err != nil {
		t.Fatal(err)
	}
	url := s.URLFor("bg")
	execAll(t, url, "CREATE TABLE filler (id int, pad text)")
	tg, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	src, err := tg.(*Target).Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := telemetry.Start(ctx, telemetry.Config{Interval: 500 * time.Millisecond, SessionHz: 20}, src, time.Now())
	rec.Edge(ctx, true)
	load, stop := context.WithCancel(ctx)
	var clients sync.WaitGroup
	client := func(sql string) {
		clients.Go(func() {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close(context.Background())
			for load.Err() == nil {
				if _, err := c.Exec(load, sql); err != nil && load.Err() == nil {
					t.Error(err)
					return
				}
			}
		})
	}
	client("SELECT pg_sleep(0.5)")
	client("INSERT INTO filler SELECT g, repeat('x', 400) FROM generate_series(1, 20000) g")
	time.Sleep(8 * time.Second)
	rec.Edge(ctx, false)
	stop()
	clients.Wait()
	r := rec.Stop()

	sum := telemetry.Summarize(r)
	t.Logf("DB time %+v; background %+v", sum.Waits, sum.Background)
	kinds := map[string]bool{}
	for _, w := range sum.Background {
		kinds[w.Backend] = true
		if w.Backend == "client backend" {
			t.Errorf("a client backend in the background table: %+v", w)
		}
	}
	if !kinds["checkpointer"] {
		t.Errorf("background %+v: want the checkpointer, which the WAL's checkpoints kept busy", sum.Background)
	}
	sleep := 0.0
	for _, w := range sum.Waits {
		if strings.Contains(w.Name, "CheckpointWriteDelay") || strings.Contains(w.Name, "BCPU") {
			t.Errorf("database time holds a background process's %s", w.Name)
		}
		if w.Name == "Timeout/PgSleep" {
			sleep = w.Pct
		}
	}
	// Two clients, one asleep nearly all the time: about half of DB time,
	// as long as no background process is counted in it.
	if sleep < 25 || sum.ActiveSessions > 2.2 {
		t.Errorf("pg_sleep is %.1f%% of DB time with %.2f active sessions: want the two clients alone (waits %+v)", sleep, sum.ActiveSessions, sum.Waits)
	}
	// Every foreground wait has its category, and the categories share
	// out all of DB time: pg_sleep's is other's, the INSERT's CPU cpu's.
	total := 0.0
	for _, p := range sum.Categories {
		total += p
	}
	if math.Abs(total-100) > 0.01 || sum.Categories[telemetry.WaitOther] < sleep || sum.Categories[telemetry.WaitCPU] <= 0 {
		t.Errorf("categories %v (sum %.2f%%): want all of DB time, pg_sleep's %.1f%% in other, and some CPU", sum.Categories, total, sleep)
	}
}
