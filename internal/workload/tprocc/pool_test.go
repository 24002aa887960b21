package tprocc

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbrig/dbrig/internal/latency"
	runpkg "github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// TestPooledRunSQLite: tproc-c's terminals over a pool of the driver's
// sessions, end to end on a real database: 40 terminals on 3 sessions
// run the mix with no errors, never more than 3 sessions lent, each
// transaction's wait for a session recorded, and New-Orders committed.
func TestPooledRunSQLite(t *testing.T) {
	ctx := context.Background()
	w, tg := buildOn(t, onSQLite, 1)
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res := workloadtest.PooledRun(t, r, tg.Classify, 40, 3)
	if orders := res.Tally[tNewOrders] - res.Tally[tRollbacks]; orders == 0 {
		t.Errorf("no New-Order committed: tally %v", res.Tally)
	}
}

// TestPooledSessionsPostgres: 500 terminals on 5 sessions against a real
// PostgreSQL, as issue 22 asks. A side connection polls pg_stat_activity
// through the run, and the server's own count of sessions opened
// (pg_stat_database.sessions) is read before and after: the run adds at
// most its 5 sessions and the target's connection for the marks, never
// one per terminal. The database's transaction count agrees with the
// client's within 1%, the pool's flushes at the edges included, with
// autovacuum off on its tables.
func TestPooledSessionsPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := onPostgres(t, 1)
	w, tg := openBuilt(t, url, 1)
	w.mode = workload.ModeProcs
	// Autovacuum's visits to the tables the run changes count in the
	// database's transactions: with them, a CI run's database counted 1.7%
	// more than the client.
	pgtest.NoAutovacuum(t, url)
	// The side connection is on another database, so that its reads stay
	// out of the test database's transaction count.
	side, db := pgtest.Maintenance(t, url)
	defer side.Close(context.Background())
	before := sessionsOpened(t, side, db)
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	watch := pgtest.WatchClientBackends(t, url)
	doc, err := runpkg.Run(ctx, tg, w, r, runpkg.Options{VUs: 500, Connections: 5, Rampup: time.Second, Duration: 5 * time.Second})
	most := watch()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	opened := sessionsOpened(t, side, db) - before
	t.Logf("at most %d client backends; %d sessions opened", most, opened)
	if s := doc.Sessions; s == nil || s.Terminals != 500 || s.Sessions != 5 || s.InUseMax > 5 {
		t.Fatalf("sessions section %+v: want 500 terminals on 5 sessions, at most 5 lent", doc.Sessions)
	}
	// Beside the pool: the target's connection, which takes the marks,
	// and the telemetry's.
	if most < 5 || most > 7 {
		t.Errorf("the server showed at most %d client sessions: want the pool's 5, the target's and the telemetry's", most)
	}
	if opened > 7 {
		t.Errorf("the server opened %d sessions for the run: want at most 7", opened)
	}
	var client, errs, retries int64
	for _, tx := range doc.Transactions {
		client += tx.Count
		errs += tx.Errors
		retries += tx.Retries
	}
	waits, err := latency.Decode(doc.Sessions.WaitHistogram)
	if err != nil {
		t.Fatal(err)
	}
	if client == 0 || errs > 0 || waits.TotalCount() != client {
		t.Fatalf("%d transactions, %d errors, %d waits: want transactions, no errors, a wait each", client, errs, waits.TotalCount())
	}
	tpm, _ := doc.Metric(metricTPM)
	t.Logf("TPM %.0f by the database, %.0f by the client", *tpm.DB, *tpm.Client)
	if math.Abs(*tpm.Client / *tpm.DB - 1) > 0.01 {
		t.Errorf("TPM %.0f by the database, %.0f by the client: more than 1%% apart", *tpm.DB, *tpm.Client)
	}
}

// sessionsOpened is the server's count of sessions opened on database
// db so far.
func sessionsOpened(t *testing.T, c *pgx.Conn, db string) int {
	t.Helper()
	// The statistics the server reads are a snapshot per transaction;
	// clear it so this read sees the sessions that ended since.
	var n int
	if _, err := c.Exec(context.Background(), "SELECT pg_stat_clear_snapshot()"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(context.Background(),
		"SELECT sessions FROM pg_stat_database WHERE datname = $1", db).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
