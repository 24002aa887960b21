package tprocc

import (
	"context"
	"math"
	"testing"
	"time"

	runpkg "github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestTPMAgreesPostgres: over 20 s of 4 VUs in procs mode, with
// telemetry recording, the database's own transaction count is the
// client's, within 0.2%: the sessions' start-up and prepares, the marks,
// the telemetry and the flushes at the edges all stay out of it. What is
// left is autovacuum's: its work on the tables, which the test turns off,
// and its visits to the database, a couple of transactions each, which
// nothing can tell apart. (It ran a minute, which kept both CPUs of this
// machine busy and slowed every other package's tests; the two sides
// agreed to the transaction, 95,677 each, so a third of it still puts
// 0.2% at some 60 transactions.)
func TestTPMAgreesPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20-second run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	url := onPostgres(t, 4)
	w, tg := openBuilt(t, url, 4)
	pgtest.NoAutovacuum(t, url)
	w.mode = workload.ModeProcs
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	doc, err := runpkg.Run(ctx, tg, w, r, runpkg.Options{VUs: 4, Rampup: 2 * time.Second, Duration: 20 * time.Second,
		Telemetry: telemetry.Config{SessionHz: telemetry.DefaultSessionHz}})
	if err != nil {
		t.Fatal(err)
	}
	var client, errs, retries int64
	for _, tx := range doc.Transactions {
		client += tx.Count
		errs += tx.Errors
		retries += tx.Retries
	}
	if errs > 0 || len(doc.Marks) != 2 {
		t.Fatalf("%d errors, %d marks: want none and two", errs, len(doc.Marks))
	}
	// Each retry's failed attempt is a rollback the database counts.
	db := doc.Marks[1].Values[workload.Xacts] - doc.Marks[0].Values[workload.Xacts] - retries
	tpm, _ := doc.Metric(metricTPM)
	t.Logf("%d transactions by the database's count, %d by the client's, %d retries; TPM %.0f and %.0f", db, client, retries, *tpm.DB, *tpm.Client)
	if math.Abs(*tpm.Client / *tpm.DB - 1) > 0.002 {
		t.Errorf("TPM %.0f by the database, %.0f by the client: more than 0.2%% apart", *tpm.DB, *tpm.Client)
	}
	if extra := db - client; extra < 0 || extra > 12 {
		t.Errorf("the database counted %d transactions more than the client: want 0 to a few of autovacuum's", extra)
	}
}
