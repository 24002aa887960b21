//go:build unix

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

// side is one tool with its cluster.
type side struct {
	tool    string
	scratch *harness.Scratch
	server  harness.ServerFigures
	urlFor  func(string) string
	// db is the tool's database; pid the postmaster's.
	db  string
	pid int
	// kept is db as built, which each run's db is made from again.
	kept *harness.Kept
}

// docSettings are the harness doc's changes to the benchmarks' tuning,
// so that both clusters run as the doc's did: shared_buffers 2GB,
// max_wal_size 8GB, checkpoint_timeout 15min, durable. track_io_timing,
// which a managed server would add, stays off; pg_stat_statements counts
// the buffers each run dirtied, inside the tools' functions too (track
// all), where the top-level statement's figures hold its nested ones.
var docSettings = map[string]string{
	"checkpoint_timeout":       "15min",
	"shared_preload_libraries": "pg_stat_statements",
	"pg_stat_statements.track": "all",
	"track_io_timing":          "off",
}

// startSide starts a cluster in scratch with docSettings.
func startSide(ctx context.Context, scratch *harness.Scratch, o options, tool string) (*side, error) {
	urlFor, f, err := scratch.TunedServerWith(ctx, o.PgBin, false, docSettings)
	if err != nil {
		return nil, err
	}
	st, err := scratch.Server.Status(ctx)
	if err != nil {
		return nil, err
	}
	s := &side{tool: tool, scratch: scratch, server: f, urlFor: urlFor, pid: st.PID}
	return s, s.admin(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
}

// keep copies the built database, so that every run starts from the
// same rows: without it the faster tool's later runs paid for the orders
// and lines its earlier ones added.
func (s *side) keep(ctx context.Context) (err error) {
	s.kept, err = harness.Keep(ctx, s.urlFor("postgres"), s.db)
	return err
}

// counts are the cluster's counters that a run's whole-run figures are
// differences of.
type counts struct {
	wal, dirtied, nextOrder int64
}

// read reads the counters: the cluster's WAL bytes (pg_stat_wal) and the
// blocks the top-level statements run in the tool's database dirtied
// (pg_stat_statements, since its last reset), from the maintenance
// database, where the extension is, and sum(d_next_o_id) from the tool's.
// reset then clears pg_stat_statements for the run.
func (s *side) read(ctx context.Context, reset bool) (c counts, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("read the %s cluster's WAL, dirtied blocks and orders: %w", s.tool, err)
		}
	}()
	if err := s.query(ctx, s.db, "SELECT sum(d_next_o_id)::bigint FROM district", nil, &c.nextOrder); err != nil {
		return c, err
	}
	err = s.query(ctx, "postgres", `SELECT (SELECT wal_bytes FROM pg_stat_wal)::bigint,
		(SELECT coalesce(sum(shared_blks_dirtied + local_blks_dirtied), 0) FROM pg_stat_statements
		  WHERE toplevel AND dbid = (SELECT oid FROM pg_database WHERE datname = $1))::bigint`,
		[]any{s.db}, &c.wal, &c.dirtied)
	if err == nil && reset {
		err = s.admin(ctx, "SELECT pg_stat_statements_reset()")
	}
	return c, err
}

// query scans the one row sql returns, run with args in database db.
func (s *side) query(ctx context.Context, db, sql string, args []any, into ...any) error {
	conn, err := pgx.Connect(ctx, s.urlFor(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.QueryRow(ctx, sql, args...).Scan(into...)
}

// buildDbrig builds dbrig's warehouses into database bench.
func (s *side) buildDbrig(ctx context.Context, dbrig string) error {
	s.db = "bench"
	if err := s.scratch.Server.CreateDB(ctx, s.db); err != nil {
		return err
	}
	wall, _, err := harness.Timed(ctx, harness.Command(ctx, dbrig, "build", "tproc-c", "--target", s.urlFor(s.db),
		"--warehouses", strconv.Itoa(warehouses)))
	if err != nil {
		return err
	}
	fmt.Printf("dbrig build: %.1f s\n", wall.Seconds())
	return nil
}

// run is one run of the side's tool: its database made again from the
// built copy, a CHECKPOINT, the run, and the tables' last autoanalyze and
// the whole run's WAL and dirtied blocks after it. Pair 0 is the warm-up.
func (s *side) run(ctx context.Context, pair int, dbrig string, duration time.Duration, hdb string) (Run, error) {
	what := fmt.Sprintf("Pair %d", pair)
	if pair == 0 {
		what = "Warm-up, not counted"
	}
	fmt.Printf("\n== %s: %s, %d VUs, %s ramp-up, %s measured\n", what, s.tool, vus, rampup, duration)
	if err := s.kept.Restore(ctx, s.tool); err != nil {
		return Run{}, err
	}
	if err := harness.Checkpoint(ctx, s.urlFor(s.db)); err != nil {
		return Run{}, err
	}
	before, err := s.read(ctx, true)
	if err != nil {
		return Run{}, err
	}
	var r Run
	if s.tool == "dbrig" {
		r, err = s.runDbrig(ctx, dbrig, filepath.Join(s.scratch.Dir, fmt.Sprintf("run-%d.json", pair)), duration)
	} else {
		r, err = s.runHammerDB(ctx, hdb, pair, duration)
	}
	if err != nil {
		return r, err
	}
	r.Tool = s.tool
	if r.NewOrders > 0 {
		r.ServerMsPerNO = r.ServerCPUSeconds * 1e3 / float64(r.NewOrders)
	}
	after, err := s.read(ctx, false)
	if err != nil {
		return r, err
	}
	if r.RunNewOrders = after.nextOrder - before.nextOrder; r.RunNewOrders > 0 {
		r.WALPerNO = float64(after.wal-before.wal) / float64(r.RunNewOrders)
		r.DirtiedPerNO = float64(after.dirtied) / float64(r.RunNewOrders)
	}
	if r.Autoanalyze, err = s.autoanalyze(ctx); err != nil {
		return r, err
	}
	for _, table := range analyzed {
		if at := r.Autoanalyze[table]; at != nil && at.After(r.Started) {
			r.AnalyzedDuring = append(r.AnalyzedDuring, table)
		}
	}
	fmt.Printf("%s: NOPM %.0f (its own figure), %.0f (database); server CPU %.3f ms per New-Order over %.0f s (window from %s)\n",
		s.tool, r.NOPMTool, r.NOPMDB, r.ServerMsPerNO, r.WindowSeconds, r.WindowFrom)
	fmt.Printf("%s: per New-Order over the whole run (%s New-Orders, ramp-up included): %.0f WAL bytes, %.2f blocks first dirtied (a block counts once until a checkpoint writes it)\n",
		s.tool, human.Thousands(float64(r.RunNewOrders)), r.WALPerNO, r.DirtiedPerNO)
	return r, nil
}

// runDbrig runs dbrig in procs mode and takes its own window's figures:
// NOPM from its client count and from sum(d_next_o_id), and the server's
// CPU from its telemetry (the postmaster's process tree).
func (s *side) runDbrig(ctx context.Context, dbrig, jsonPath string, duration time.Duration) (Run, error) {
	r := Run{Started: time.Now().UTC(), WindowFrom: "run"}
	err := harness.Command(ctx, dbrig, "run", "tproc-c", "--target", s.urlFor(s.db),
		"--vus", strconv.Itoa(vus), "--rampup", rampup.String(), "--duration", duration.String(),
		"--mode", "procs", "--json", jsonPath).Run()
	var doc *result.Document
	if err == nil {
		doc, err = result.Read(jsonPath)
	}
	if err != nil {
		return r, fmt.Errorf("dbrig run: %w", err)
	}
	nopm, _ := doc.Metric("nopm")
	if doc.Interrupted || nopm.Client == nil || nopm.DB == nil || doc.Telemetry == nil {
		return r, fmt.Errorf("the dbrig run was interrupted, or has no NOPM from the database, or no telemetry (%s)", jsonPath)
	}
	h := telemetry.Summarize(doc.Telemetry).Host
	if h == nil || h.Server == nil {
		return r, fmt.Errorf("the dbrig run's telemetry has no server CPU")
	}
	r.WindowSeconds = doc.WindowSeconds
	r.NOPMTool, r.NOPMDB = *nopm.Client, *nopm.DB
	r.NewOrders = int64(*nopm.DB*r.WindowSeconds/60 + 0.5)
	// Percent of all CPUs over the window, into CPU seconds.
	r.ServerCPUSeconds = *h.Server / 100 * float64(doc.Host.CPUs) * r.WindowSeconds
	return r, nil
}

// analyzed are the tables whose autoanalyze can change a plan under the
// run: Stock-Level's order_line and stock, and customer.
var analyzed = []string{"order_line", "stock", "customer"}

// autoanalyze reads when each of the analyzed tables was last analyzed
// by autovacuum; nil for never.
func (s *side) autoanalyze(ctx context.Context) (map[string]*time.Time, error) {
	conn, err := pgx.Connect(ctx, s.urlFor(s.db))
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	out := map[string]*time.Time{}
	for _, table := range analyzed {
		var at *time.Time
		err := conn.QueryRow(ctx, "SELECT last_autoanalyze FROM pg_stat_user_tables WHERE relname = $1", table).Scan(&at)
		if err != nil {
			return nil, fmt.Errorf("last_autoanalyze of %s: %w", table, err)
		}
		out[table] = at
	}
	return out, nil
}
