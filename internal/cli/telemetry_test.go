package cli_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// TestTelemetryPostgres: a run records the host and the database over its
// window, the database's own commit count agrees with the run's
// transactions, and the report shows the sections that explain the run;
// --no-telemetry records none.
func TestTelemetryPostgres(t *testing.T) {
	t.Parallel()
	u := pgTPROCC(t)
	pgtest.NoAutovacuum(t, u)
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	mustRun(t, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "2s", "--duration", "6s", "--json", path)
	doc, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := doc.Telemetry
	if rec == nil || rec.Host == nil || rec.DB == nil {
		t.Fatalf("telemetry %+v: want host and database sides", rec)
	}
	// The telemetry's edges are read just outside the database's marks,
	// so its window is the run's and the time the marks took to read:
	// 0.68 s more on a CI host at 100% (the bound was 0.5 s). A window
	// over the whole run would hold the 2 s of ramp-up too.
	if w := rec.Window[1] - rec.Window[0]; math.Abs(w-doc.WindowSeconds) > 1.5 {
		t.Errorf("telemetry window %.2f s, run window %.2f s: want them within 1.5 s, under the ramp-up's 2 s", w, doc.WindowSeconds)
	}
	s := telemetry.Summarize(rec)
	if s.Host == nil || s.Host.CPU.Busy() <= 0 || s.Host.Client <= 0 {
		t.Fatalf("host summary %+v: want CPU busy and client CPU", s.Host)
	}
	// pgtest's server runs on this host: its processes are found and busy.
	if s.Host.Server == nil || *s.Host.Server <= 0 {
		t.Errorf("server CPU %v, want > 0 (unavailable: %v)", s.Host.Server, rec.Unavailable)
	}
	if s.DB == nil {
		t.Fatalf("no database counters over the window (unavailable: %v)", rec.Unavailable)
	}
	// The samplers' own CPU is counted: some, and less than the whole
	// client's, which includes it.
	if c := rec.Cost; c == nil || c.Samples <= 0 || c.Sessions <= 0 {
		t.Errorf("telemetry's cost %+v: want both samplers' CPU time", c)
	} else if client := s.Host.Client / 100 * float64(len(s.Host.PerCPU)) * (rec.Window[1] - rec.Window[0]); c.Samples+c.Sessions >= client*1.5 {
		t.Errorf("telemetry's cost %.3f s against the client's %.3f s in the window alone", c.Samples+c.Sessions, client)
	}
	// The database's commits over the window are the run's transactions:
	// every session publishes its counts at the window's edges, and
	// dbrig's own reads stay out of them, but for the two marks' reads
	// of the workload's tables; a failed attempt is a rollback, and
	// autovacuum's visits to the database add a couple each (its work on
	// the tables is off).
	var client int64
	for _, tx := range doc.Transactions {
		client += tx.Count + tx.Errors + tx.Retries
	}
	got := int64(s.DB.Deltas[telemetry.Commits] + s.DB.Deltas[telemetry.Rollbacks])
	if extra := got - client; extra < 2 || extra > 12 {
		t.Errorf("telemetry's commits and rollbacks %d, the run's transactions and failed attempts %d: want 2 to 12 more", got, client)
	}
	if s.DB.HitPct == nil || s.DB.Deltas[telemetry.LogicalReads] <= 0 {
		t.Errorf("logical reads %v, hit %% %v", s.DB.Deltas[telemetry.LogicalReads], s.DB.HitPct)
	}
	if len(s.Waits) == 0 || s.ActiveSessions <= 0 || s.ActiveSessions > 4 {
		t.Errorf("waits %v, %.2f active sessions; want some, at most the 2 VUs and a few background ones", s.Waits, s.ActiveSessions)
	}
	text := mustRun(t, "report", "--text", path).stdout
	for _, want := range []string{"Load profile", "buffer hit %", "Top wait events", "Host CPUs", "Bzy_MHz", "Settings"} {
		wantIn(t, "report --text", text, want)
	}

	off := filepath.Join(dir, "off.json")
	mustRun(t, "run", "tproc-c", "--target", u, "--vus", "1", "--rampup", "0s", "--duration", "2s", "--no-telemetry", "--json", off)
	if doc, err := result.Read(off); err != nil {
		t.Fatal(err)
	} else if doc.Telemetry != nil {
		t.Errorf("--no-telemetry recorded %+v", doc.Telemetry)
	}
}

// TestTelemetrySQLite: the embedded target has no server to sample, but
// the host's side, its file's size and its settings are recorded.
func TestTelemetrySQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u := sqliteTPROCC(t)
	path := filepath.Join(dir, "r.json")
	mustRun(t, "run", "tproc-c", "--target", u, "--vus", "1", "--rampup", "0s", "--duration", "3s", "--json", path)
	doc, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := doc.Telemetry
	if rec == nil || rec.DB == nil || rec.Host == nil {
		t.Fatalf("telemetry %+v", rec)
	}
	if rec.DB.Settings["journal_mode"] == "" || rec.Host.Facts.DataPath == "" || !rec.Host.Facts.Embedded {
		t.Errorf("settings %v, data path %q, embedded %v", rec.DB.Settings, rec.Host.Facts.DataPath, rec.Host.Facts.Embedded)
	}
	s := telemetry.Summarize(rec)
	if s.DB == nil || s.DB.Gauges[telemetry.DatabaseBytes] <= 0 || len(s.Waits) != 0 {
		t.Errorf("database summary %+v, waits %v: want the file's size and no sessions", s.DB, s.Waits)
	}
	if s.Host == nil || s.Host.Client <= 0 || s.Host.Server != nil {
		t.Errorf("host summary %+v: the engine's CPU is the client's", s.Host)
	}
}
