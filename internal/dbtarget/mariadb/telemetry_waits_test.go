package mariadb_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestSessionWaits: the sampled sessions' waits land in the categories
// every target shares, from the process list on a server without
// performance_schema (the shared test server's default) and from
// performance_schema's current waits on one started with it on, as
// `dbrig server start --kind mariadb --set performance_schema=ON` does.
// In both, a session blocked on a row another holds is a lock wait
// (INNODB_TRX sees it, the process list does not), a busy one is at work
// (on CPU, as far as performance_schema can tell; in the engine, the
// process list cannot), and neither the holder, idle in its transaction,
// nor a sleeping one is.
func TestSessionWaits(t *testing.T) {
	t.Run("process list", func(t *testing.T) {
		checkWaits(t, open(t), "process list", telemetry.WaitEngine)
	})
	t.Run("performance_schema", func(t *testing.T) {
		ctx := context.Background()
		tg := openURL(t, withPerformanceSchema(t, "waits"))
		checkWaits(t, tg, "performance_schema's events_waits_current", telemetry.WaitCPU)
		var enabled string
		if err := session(t, tg).QueryRow(ctx,
			"SELECT enabled FROM performance_schema.setup_consumers WHERE name = 'events_waits_current'").Scan(&enabled); err != nil || enabled != "NO" {
			t.Errorf("events_waits_current after the source closed: %q, %v; want it off again, as the server started", enabled, err)
		}
	})
}

// withPerformanceSchema starts a server of the test's own with
// performance_schema on, as `dbrig server start --kind mariadb --set
// performance_schema=ON` does, and gives the URL of a new database db.
func withPerformanceSchema(t *testing.T, db string) string {
	t.Helper()
	srv := mariatest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := srv.Start(ctx, map[string]string{"performance_schema": "ON"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateDB(ctx, db); err != nil {
		t.Fatal(err)
	}
	return srv.URLFor(db)
}

// checkWaits samples four sessions of tg's database until one sample
// sees each in its category: a row lock's waiter, a busy statement (in
// busy), the lock's holder idle in its transaction and a sleeping
// statement. The settings name the source (want).
func checkWaits(t *testing.T, tg dbtarget.Target, want, busyCategory string) {
	ctx := context.Background()
	src, err := tg.(telemetry.Sourcer).Telemetry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, settings, err := src.Settings(ctx); err != nil || !strings.HasPrefix(settings["dbrig.sessions"], want) {
		t.Errorf("dbrig.sessions %q, %v; want it to start with %q", settings["dbrig.sessions"], err, want)
	}
	holder, waiter, busy, sleeper := session(t, tg), session(t, tg), session(t, tg), session(t, tg)
	exec(t, holder, "CREATE TABLE hot (id INT PRIMARY KEY, v INT)")
	exec(t, holder, "INSERT INTO hot VALUES (1, 0)")
	exec(t, holder, "BEGIN")
	exec(t, holder, "UPDATE hot SET v = 1 WHERE id = 1")
	ids := make([]int64, 2)
	for i, s := range []dbtarget.Session{busy, sleeper} {
		if err := s.QueryRow(ctx, "SELECT CONNECTION_ID()").Scan(&ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{}, 3)
	for _, run := range []struct {
		s   dbtarget.Session
		sql string
	}{
		{waiter, "UPDATE hot SET v = 2 WHERE id = 1"},
		{busy, "DO BENCHMARK(1000000000, MD5('dbrig'))"},
		{sleeper, "DO SLEEP(60)"},
	} {
		go func() { run.s.Exec(ctx, run.sql); done <- struct{}{} }()
	}
	defer func() {
		for _, id := range ids {
			exec(t, holder, fmt.Sprintf("KILL QUERY %d", id))
		}
		exec(t, holder, "ROLLBACK")
		for range 3 {
			<-done
		}
	}()
	wantCats := map[string]int{telemetry.WaitLock: 1, busyCategory: 1, telemetry.WaitClient: 1, telemetry.WaitOther: 1}
	var seen []telemetry.Session
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if seen, err = src.Sessions(ctx); err != nil {
			t.Fatal(err)
		}
		cats := map[string]int{}
		for _, ss := range seen {
			if !ss.Background {
				cats[ss.Category]++
			}
		}
		if maps.Equal(cats, wantCats) {
			return
		}
	}
	t.Errorf("sessions %+v: want one each in %v", seen, wantCats)
}
