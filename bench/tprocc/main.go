//go:build unix

// Command tprocc benchmarks dbrig's TPROC-C against a PostgreSQL server it
// starts itself, and prints the figures the design notes compare with the
// peers (HammerDB, BenchBase, go-tpc) on this machine kind:
//
//   - the time `dbrig build tproc-c` takes, next to a raw binary COPY of the
//     same rows (plus keys and ANALYZE) in the same run, on the same server;
//   - NOPM, the server's CPU per New-Order and the client's CPU per
//     transaction for `dbrig run tproc-c`, procs and sql mode;
//   - the client's CPU per transaction as a whole process next to
//     pgbench's, calling the same functions with -M prepared, with one
//     thread (-j 1, as the goal is judged) and with a thread per CPU, in
//     rounds that alternate their order, each from the same restored
//     database; and the database's count of transactions next to the
//     client's.
//
// Every judgement is a ratio within the run, since the machines it runs on
// are shared and their absolute speed drifts.
// It is a benchmark, not a test: it prints figures and judges them against
// targets, but only fails when something does not work. bench/tprocc.sh
// builds dbrig and runs it; see -help for the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

// Targets (issue 24's), as ratios measured in one run (PG 15, 4
// warehouses, 4 VUs). sql mode's client CPU per transaction is shown
// beside its NOPM ratio, with no goal of its own; the server's CPU per
// New-Order of each mode is shown, judged against HammerDB's by
// bench/hammerdb.sh.
const (
	targetRatio    = 1.0  // build / raw COPY, at most
	targetPgbench  = 1.1  // client CPU per transaction / pgbench's, at most
	targetSQLNOPM  = 0.67 // sql-mode NOPM / procs mode's, at least
	targetTPMAgree = 0.002
	targetWH       = 4
	targetVUs      = 4
)

// perWarehouse names each table's warehouse column, so the export can
// write one file per warehouse, as the build loads one job per warehouse.
// Tables missing here (item, dbrig_tprocc) are exported whole.
var perWarehouse = map[string]string{
	"warehouse":  "w_id",
	"district":   "d_w_id",
	"customer":   "c_w_id",
	"history":    "h_w_id",
	"new_order":  "no_w_id",
	"orders":     "o_w_id",
	"order_line": "ol_w_id",
	"stock":      "s_w_id",
}

// allTables is every table the schema's "tables" block creates; the
// export and the row check both cover all of them.
var allTables = []string{"warehouse", "district", "customer", "history", "new_order",
	"orders", "order_line", "item", "stock", "dbrig_tprocc"}

// sqlDir holds tproc-c's SQL: the generic blocks and PostgreSQL's own.
const sqlDir = "internal/workload/tprocc/sql"

type options struct {
	harness.Common
	warehouses  int
	loaders     int
	vus         int
	vusHigh     int
	duration    time.Duration
	rampup      time.Duration
	quick       bool
	skipRaw     bool
	skipSQL     bool
	skipPgbench bool
	skipRuns    bool
	// clientRounds is how many rounds of dbrig, pgbench -j 1 and pgbench
	// -j CPUs measure the client's cost as a whole process.
	clientRounds int
	// telemetryPairs is how many pairs of runs, without and with
	// telemetry, measure what recording it costs the client.
	telemetryPairs int
}

// Figures is what --json writes.
type Figures struct {
	harness.ServerFigures
	Quick        bool    `json:"quick"`
	Warehouses   int     `json:"warehouses"`
	Loaders      int     `json:"loaders"`
	BuildSeconds float64 `json:"build_seconds"`
	// BuildPhases are the build's own timings of its steps (its
	// "Phases:" line); BuildCPUSeconds is dbrig's CPU over the build,
	// nearly all of it making and sending the rows.
	BuildPhases     []workload.Phase `json:"build_phases,omitempty"`
	BuildCPUSeconds float64          `json:"build_client_cpu_seconds"`
	// BuildServerCPUSeconds is the server's CPU over the build (its
	// process tree's), beside the reference's Raw.ServerCPUSeconds.
	BuildServerCPUSeconds float64             `json:"build_server_cpu_seconds"`
	Raw                   *harness.RawFigures `json:"raw_copy,omitempty"`
	BuildRawRatio         float64             `json:"build_raw_ratio,omitempty"`
	Runs                  []RunFigures        `json:"runs"`
	// ClientRounds are the whole-process comparisons with pgbench, in
	// the order they ran.
	ClientRounds []ClientRound `json:"client_rounds,omitempty"`
	// ClientRatio and ClientRatioJN are the median of dbrig's whole-process
	// CPU per transaction over the rounds, over pgbench's median with -j 1
	// and with -j CPUs.
	ClientRatio   float64 `json:"client_ratio_j1,omitempty"`
	ClientRatioJN float64 `json:"client_ratio_jn,omitempty"`
}

// ClientRound is one round of the client's cost: dbrig's procs run with no
// ramp-up, so that every transaction it ran is in its count, and pgbench
// with one thread and with a thread per CPU (or per client, if fewer).
type ClientRound struct {
	// Dbrig is the run; its CPUSeconds are the whole process's, its
	// ClientMicros the telemetry's over the window.
	Dbrig RunFigures `json:"dbrig"`
	// DbrigMicros is the whole process's CPU per transaction it counted.
	DbrigMicros float64        `json:"dbrig_us_per_tx"`
	Pgbench1    PgbenchFigures `json:"pgbench_j1"`
	PgbenchN    PgbenchFigures `json:"pgbench_jn"`
}

// RunFigures is one `dbrig run`.
type RunFigures struct {
	VUs        int     `json:"vus"`
	Mode       string  `json:"mode"`
	Rampup     string  `json:"rampup"`
	Duration   string  `json:"duration"`
	NOPM       float64 `json:"nopm"`
	TPM        float64 `json:"tpm"`
	NOPMClient float64 `json:"nopm_client"`
	TPMClient  float64 `json:"tpm_client"`
	// TPMDB is the database's own count (commits and rollbacks), 0 when
	// it could not be read.
	TPMDB float64 `json:"tpm_db,omitempty"`
	// ServerMillisPerNO is the server's process tree's CPU over the window
	// per New-Order committed; ClientMicros dbrig's CPU over the window per
	// transaction. Both from the run's telemetry, 0 without it.
	ServerMillisPerNO float64 `json:"server_ms_per_new_order,omitempty"`
	ClientMicros      float64 `json:"client_us_per_tx,omitempty"`
	// FromDB says NOPM and TPM are the database's own counters; otherwise
	// they are the client's counts.
	FromDB        bool    `json:"from_db"`
	Errors        int64   `json:"errors"`
	WindowSeconds float64 `json:"window_seconds"`
	// Client CPU and wall time cover the whole dbrig process: connect,
	// ramp-up, window and report.
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"client_cpu_seconds"`
	ClientCores float64 `json:"client_cores"`
	// Telemetry says the run recorded host and database telemetry, as
	// every run does unless told not to.
	Telemetry bool `json:"telemetry"`
	// ABPair numbers the telemetry pair the run belongs to; 0 for none.
	ABPair int `json:"telemetry_pair,omitempty"`
}

// cpuPerKiloTx is the client's CPU milliseconds per thousand transactions
// the window counted (the whole process's CPU, ramp-up included, which
// both sides of a pair share).
func (r RunFigures) cpuPerKiloTx() float64 {
	return r.CPUSeconds * 1e6 / (r.TPM * r.WindowSeconds / 60)
}

func main() {
	var o options
	fs := flag.CommandLine
	o.Flags(fs)
	fs.IntVar(&o.warehouses, "warehouses", targetWH, "warehouses to build")
	fs.IntVar(&o.loaders, "loaders", 2, "parallel loaders for the build, and connections for the raw COPY")
	fs.IntVar(&o.vus, "vus", targetVUs, "virtual users for the procs and sql runs")
	fs.IntVar(&o.vusHigh, "vus-high", 8, "virtual users for the last procs run (0 skips it)")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "measured window of each run")
	fs.DurationVar(&o.rampup, "rampup", 10*time.Second, "ramp-up of each run")
	fs.BoolVar(&o.quick, "quick", false, "smoke run: 1 warehouse, 2s ramp-up, 10s windows (flags given explicitly still win)")
	fs.BoolVar(&o.skipRaw, "skip-raw", false, "skip the raw COPY reference")
	fs.BoolVar(&o.skipSQL, "skip-sql", false, "skip the sql-mode run")
	fs.BoolVar(&o.skipPgbench, "skip-pgbench", false, "skip the pgbench reference")
	fs.BoolVar(&o.skipRuns, "skip-runs", false, "only build (and the raw COPY reference); no runs")
	fs.IntVar(&o.clientRounds, "client-rounds", 3, "rounds of dbrig, pgbench -j 1 and pgbench -j CPUs, each from the restored database, for the client's CPU as a whole process (0 skips them, as --skip-pgbench does)")
	fs.IntVar(&o.telemetryPairs, "telemetry-pairs", 0, "after the runs, this many pairs of procs runs without and with telemetry, for its client CPU cost")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "tprocc: unexpected argument %q; see -help\n", flag.Arg(0))
		os.Exit(2)
	}
	if o.quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["warehouses"] {
			o.warehouses = 1
		}
		if !set["duration"] {
			o.duration = 10 * time.Second
		}
		if !set["rampup"] {
			o.rampup = 2 * time.Second
		}
	}
	if o.warehouses < 1 || o.loaders < 1 || o.vus < 1 || o.vusHigh < 0 || o.duration <= 0 || o.rampup < 0 || o.telemetryPairs < 0 || o.clientRounds < 0 {
		fmt.Fprintln(os.Stderr, "tprocc: --warehouses, --loaders and --vus must be at least 1, --vus-high, --client-rounds and --telemetry-pairs at least 0, --duration positive and --rampup not negative")
		os.Exit(2)
	}

	harness.Main("tprocc", func(ctx context.Context) error { return run(ctx, o) })
}

func run(ctx context.Context, o options) (err error) {
	scratch, dbrig, sql, err := o.Setup(ctx, "tprocc", sqlDir, "schema.sql")
	if err != nil {
		return err
	}
	defer func() { err = scratch.Close(o.Keep, err) }()
	schema := sql[0]

	// 1. The server.
	urlFor, server, err := scratch.TunedServer(ctx, o.PgBin, o.Socket)
	if err != nil {
		return err
	}
	fig := &Figures{ServerFigures: server, Quick: o.quick, Warehouses: o.warehouses, Loaders: o.loaders}
	st, err := scratch.Server.Status(ctx)
	if err != nil {
		return err
	}
	serverCPU := func() (time.Duration, error) { return harness.TreeCPU(st.PID) }

	// 2. The build.
	if err := scratch.Server.CreateDB(ctx, "bench"); err != nil {
		return err
	}
	benchURL := urlFor("bench")
	if err := harness.Checkpoint(ctx, benchURL); err != nil {
		return err
	}
	fmt.Printf("\n== Build: %d warehouses, %d loaders\n", o.warehouses, o.loaders)
	if err := build(ctx, dbrig, benchURL, serverCPU, fig, o); err != nil {
		return err
	}

	// 3. The raw COPY reference.
	if !o.skipRaw {
		fmt.Printf("\n== Raw COPY reference: binary COPY from server-side files, keys and ANALYZE, %d connections\n", o.loaders)
		raw, err := rawCopy(ctx, scratch.Server, urlFor, serverCPU, schema, filepath.Join(scratch.Dir, "copy"), o)
		if err != nil {
			return fmt.Errorf("raw COPY reference: %w", err)
		}
		fig.Raw = raw
		fig.BuildRawRatio = fig.BuildSeconds / raw.Seconds
		fmt.Println(raw)
		fmt.Printf("Build / raw COPY: %.2f\n", fig.BuildRawRatio)
	}

	if !o.skipRuns {
		// The client's rounds each start from the database as built.
		kept, err := harness.Keep(ctx, urlFor("postgres"), "bench")
		if err != nil {
			return err
		}
		if err := runs(ctx, dbrig, benchURL, kept, scratch.Dir, fig, o); err != nil {
			return err
		}
	}

	// 5. The figures.
	fmt.Println()
	printTable(os.Stdout, fig, o)
	return harness.WriteFigures(o.JSON, fig)
}

// build times `dbrig build`, with its CPU and the server's, and reads its
// phases from its output.
func build(ctx context.Context, dbrig, url string, serverCPU func() (time.Duration, error), fig *Figures, o options) error {
	b, err := harness.Build(ctx, dbrig, []string{"tproc-c", "--target", url,
		"--warehouses", strconv.Itoa(o.warehouses), "--loaders", strconv.Itoa(o.loaders)}, serverCPU)
	fig.BuildSeconds, fig.BuildCPUSeconds, fig.BuildServerCPUSeconds, fig.BuildPhases = b.Seconds, b.CPUSeconds, b.ServerCPUSeconds, b.Phases
	return err
}

// runs are dbrig's runs and pgbench's reference, one after another on the
// same database: each adds orders, which the next one sees, as in
// HammerDB's usual practice of not rebuilding between runs.
func runs(ctx context.Context, dbrig, benchURL string, kept *harness.Kept, dir string, fig *Figures, o options) error {
	type plan struct {
		vus  int
		mode string
	}
	plans := []plan{{o.vus, "procs"}}
	if !o.skipSQL {
		plans = append(plans, plan{o.vus, "sql"})
	}
	if o.vusHigh > 0 {
		plans = append(plans, plan{o.vusHigh, "procs"})
	}
	for i, p := range plans {
		r, err := runOnce(ctx, dbrig, benchURL, filepath.Join(dir, fmt.Sprintf("run-%d.json", i+1)), p.vus, p.mode, true, o)
		if err != nil {
			return err
		}
		fig.Runs = append(fig.Runs, r)
	}
	if !o.skipPgbench && o.clientRounds > 0 {
		if err := clientRounds(ctx, dbrig, benchURL, kept, dir, fig, o); err != nil {
			return err
		}
	}
	// Without and with telemetry in turn, so that the machine's drift
	// falls on both alike.
	for pair := 1; pair <= o.telemetryPairs; pair++ {
		for _, on := range []bool{false, true} {
			r, err := runOnce(ctx, dbrig, benchURL, filepath.Join(dir, fmt.Sprintf("ab-%d-%t.json", pair, on)), o.vus, "procs", on, o)
			if err != nil {
				return err
			}
			r.ABPair = pair
			fig.Runs = append(fig.Runs, r)
		}
	}
	return nil
}

// clientRounds runs the rounds of the client's cost: dbrig's procs run
// with no ramp-up, pgbench -j 1 and pgbench -j CPUs, each from the
// database as built, in an order that turns each round (dbrig first, then
// last, ...), so that the machine's drift falls on all three alike.
func clientRounds(ctx context.Context, dbrig, url string, kept *harness.Kept, dir string, fig *Figures, o options) error {
	noRampup := o
	noRampup.rampup = 0
	threads := min(o.vus, runtime.NumCPU())
	for round := 1; round <= o.clientRounds; round++ {
		var c ClientRound
		steps := []func() error{
			func() (err error) {
				c.Dbrig, err = runOnce(ctx, dbrig, url, filepath.Join(dir, fmt.Sprintf("client-%d.json", round)), o.vus, "procs", true, noRampup)
				c.DbrigMicros = c.Dbrig.CPUSeconds * 1e6 / (c.Dbrig.TPMClient * c.Dbrig.WindowSeconds / 60)
				return err
			},
			func() error { return pgbenchInto(ctx, &c.Pgbench1, 1, url, dir, o) },
			func() error { return pgbenchInto(ctx, &c.PgbenchN, threads, url, dir, o) },
		}
		if round%2 == 0 {
			slices.Reverse(steps)
		}
		for _, step := range steps {
			if err := kept.Restore(ctx, fmt.Sprintf("client round %d", round)); err != nil {
				return err
			}
			if err := step(); err != nil {
				return err
			}
		}
		fmt.Printf("Round %d: client CPU per transaction, whole process: dbrig %.1f µs, pgbench -j 1 %.1f µs, -j %d %.1f µs\n",
			round, c.DbrigMicros, c.Pgbench1.ClientMicros, threads, c.PgbenchN.ClientMicros)
		fig.ClientRounds = append(fig.ClientRounds, c)
	}
	var d, p1, pn []float64
	for _, c := range fig.ClientRounds {
		d, p1, pn = append(d, c.DbrigMicros), append(p1, c.Pgbench1.ClientMicros), append(pn, c.PgbenchN.ClientMicros)
	}
	fig.ClientRatio, fig.ClientRatioJN = median(d)/median(p1), median(d)/median(pn)
	return nil
}

// pgbenchInto runs the pgbench reference with threads into f.
func pgbenchInto(ctx context.Context, f *PgbenchFigures, threads int, url, dir string, o options) error {
	pg, err := runPgbench(ctx, o.PgBin, dir, url, o.vus, threads, o.warehouses, o.duration)
	if err != nil {
		return fmt.Errorf("pgbench reference: %w", err)
	}
	*f = *pg
	return nil
}

// median is the middle of xs (the mean of the two middle ones), which it
// sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func runOnce(ctx context.Context, dbrig, url, jsonPath string, vus int, mode string, withTelemetry bool, o options) (RunFigures, error) {
	r := RunFigures{VUs: vus, Mode: mode, Rampup: o.rampup.String(), Duration: o.duration.String(), Telemetry: withTelemetry}
	if err := harness.Checkpoint(ctx, url); err != nil {
		return r, err
	}
	args := []string{"run", "tproc-c", "--target", url,
		"--vus", strconv.Itoa(vus), "--rampup", o.rampup.String(), "--duration", o.duration.String(),
		"--mode", mode, "--json", jsonPath}
	with := "with telemetry"
	if !withTelemetry {
		args, with = append(args, "--no-telemetry"), "without telemetry"
	}
	fmt.Printf("\n== Run: %d VUs, --mode %s, %s ramp-up, %s measured, %s\n", vus, mode, o.rampup, o.duration, with)
	wall, cpu, err := harness.Timed(ctx, harness.Command(ctx, dbrig, args...))
	if err != nil {
		return r, err
	}
	doc, err := result.Read(jsonPath)
	if err != nil {
		return r, err
	}
	if doc.Interrupted {
		return r, fmt.Errorf("the %s run was interrupted", mode)
	}
	nopm, _ := doc.Metric("nopm")
	tpm, _ := doc.Metric("tpm")
	if nopm.Client == nil || tpm.Client == nil {
		return r, fmt.Errorf("the %s run counted no NOPM on the client side", mode)
	}
	r.NOPMClient, r.NOPM, r.TPM, r.TPMClient = *nopm.Client, *nopm.Client, *tpm.Client, *tpm.Client
	if nopm.DB != nil && tpm.DB != nil {
		r.NOPM, r.TPM, r.TPMDB, r.FromDB = *nopm.DB, *tpm.DB, *tpm.DB, true
	}
	if doc.Telemetry != nil {
		// Percent of all CPUs over the window, into CPU seconds per minute.
		perMinute := func(pct float64) float64 { return pct / 100 * float64(doc.Host.CPUs) * 60 }
		if h := telemetry.Summarize(doc.Telemetry).Host; h != nil {
			r.ClientMicros = perMinute(h.Client) * 1e6 / r.TPMClient
			if h.Server != nil {
				r.ServerMillisPerNO = perMinute(*h.Server) * 1e3 / r.NOPMClient
			}
		}
	}
	for _, tx := range doc.Transactions {
		r.Errors += tx.Errors
	}
	r.WindowSeconds = doc.WindowSeconds
	r.WallSeconds, r.CPUSeconds = wall.Seconds(), cpu.Seconds()
	r.ClientCores = r.CPUSeconds / r.WallSeconds
	fmt.Printf("Client: %.2f CPU s over %.1f s wall = %.3f cores\n", r.CPUSeconds, r.WallSeconds, r.ClientCores)
	return r, nil
}

// rawCopy times the raw COPY reference (see harness.RawCopy) into a fresh
// database "rawcopy", one file per table and warehouse, as the build
// loads one job per warehouse.
func rawCopy(ctx context.Context, srv *postgres.Server, urlFor func(string) string,
	serverCPU func() (time.Duration, error), schema workload.SQLFile, dir string, o options) (*harness.RawFigures, error) {
	if err := harness.ServerDir(dir, filepath.Join(srv.Dir, "data")); err != nil {
		return nil, err
	}
	return harness.RawCopy{
		Source: urlFor("bench"), Admin: srv, DB: "rawcopy", URLFor: urlFor, Dir: dir,
		Schema: schema, Tables: allTables, Conns: o.loaders, ServerCPU: serverCPU,
		Split: func(table string) []string {
			col, ok := perWarehouse[table]
			if !ok {
				return nil
			}
			where := make([]string, o.warehouses)
			for w := range where {
				where[w] = fmt.Sprintf("%s = %d", col, w+1)
			}
			return where
		},
	}.Run(ctx)
}

// printTable prints the figures and the ratios each goal is judged by.
func printTable(w io.Writer, f *Figures, o options) {
	comparable := f.Warehouses == targetWH && !f.Quick
	fmt.Fprintf(w, "== Figures: %d warehouses, %s, %s\n", f.Warehouses, f.Connection, human.FirstLine(f.ServerVersion))
	if !comparable {
		fmt.Fprintf(w, "(goals are for %d warehouses and full-length runs; not judged here)\n", targetWH)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tvalue\tgoal\tverdict")
	judge := func(ok bool) string {
		switch {
		case !comparable:
			return "-"
		case ok:
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintf(tw, "build (s)\t%.1f\t\t\n", f.BuildSeconds)
	if f.Raw != nil {
		fmt.Fprintf(tw, "raw COPY + keys + ANALYZE (s)\t%.1f\t\t\n", f.Raw.Seconds)
		fmt.Fprintf(tw, "build / raw COPY\t%.2f\t≤ %.1f\t%s\n", f.BuildRawRatio, targetRatio, judge(f.BuildRawRatio <= targetRatio))
	}
	printPhases(tw, f)
	for _, r := range f.Runs {
		if r.ABPair > 0 {
			continue
		}
		label := fmt.Sprintf("%s, %d VUs", r.Mode, r.VUs)
		src := "db"
		if !r.FromDB {
			src = "client"
		}
		errs := ""
		if r.Errors > 0 {
			errs = fmt.Sprintf(", %d errors", r.Errors)
		}
		fmt.Fprintf(tw, "NOPM %s (%s%s)\t%s\t\t\n", label, src, errs, human.Thousands(r.NOPM))
		if r.ServerMillisPerNO > 0 {
			fmt.Fprintf(tw, "server CPU per New-Order, %s (ms)\t%.3f\t≤ 0.85x HammerDB's (bench/hammerdb.sh)\t\n", label, r.ServerMillisPerNO)
		}
		fmt.Fprintf(tw, "client CPU per transaction, %s (µs)\t%.1f\t\t\n", label, r.ClientMicros)
		if r.TPMDB > 0 {
			off := r.TPMDB/r.TPMClient - 1
			fmt.Fprintf(tw, "TPM db / client, %s\t%+.2f%%\twithin ±%.1f%%\t%s\n", label, 100*off, 100*targetTPMAgree,
				judge(math.Abs(off) <= targetTPMAgree))
		}
	}
	procs, sql := f.run("procs", o.vus), f.run("sql", o.vus)
	if n := len(f.ClientRounds); n > 0 {
		jn := f.ClientRounds[0].PgbenchN.Threads
		fmt.Fprintf(tw, "client CPU per transaction as a whole process, dbrig / pgbench -j 1, median of %d rounds\t%.2f\t≤ %.1f\t%s\n",
			n, f.ClientRatio, targetPgbench, judge(f.ClientRatio <= targetPgbench))
		fmt.Fprintf(tw, "the same, dbrig / pgbench -j %d\t%.2f\t\t\n", jn, f.ClientRatioJN)
	}
	if procs != nil && sql != nil {
		nopm := sql.NOPM / procs.NOPM
		fmt.Fprintf(tw, "NOPM sql / procs, %d VUs\t%.2f\t≥ %.2f\t%s\n", o.vus, nopm, targetSQLNOPM, judge(nopm >= targetSQLNOPM))
		if procs.ClientMicros > 0 && sql.ClientMicros > 0 {
			cpu := sql.ClientMicros / procs.ClientMicros
			fmt.Fprintf(tw, "client CPU per transaction sql / procs\t%.1f\t(shown with the NOPM ratio)\t\n", cpu)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, harness.SettingsLine(f.Settings))
	if len(f.Runs) > 0 {
		fmt.Fprintf(w, "Runs: %s ramp-up, %s measured, on one database without rebuilding, with telemetry as by default; CPU per New-Order and per transaction are over the measured window, from the run's telemetry (the server's process tree, dbrig's process); pgbench's over its whole run\n",
			o.rampup, o.duration)
	}
	printClientRounds(w, f)
	printTelemetryCost(w, f)
}

// printClientRounds gives each round's client CPU per transaction: dbrig's
// as a whole process and as its telemetry counts it over the window, and
// pgbench's with one thread and with a thread per CPU, each as a whole
// process, with the medians.
func printClientRounds(w io.Writer, f *Figures) {
	if len(f.ClientRounds) == 0 {
		return
	}
	jn := f.ClientRounds[0].PgbenchN.Threads
	fmt.Fprintf(w, "\n== The client's CPU per transaction (µs), whole processes, each run from the database as built, %d clients, no ramp-up\n", f.ClientRounds[0].Pgbench1.Clients)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "round\tdbrig\tdbrig's telemetry, window\tpgbench -j 1\tpgbench -j %d\tdbrig / -j 1\tdbrig / -j %d\tdbrig NOPM\n", jn, jn)
	var d, t, p1, pn []float64
	for i, c := range f.ClientRounds {
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%s\n", i+1, c.DbrigMicros, c.Dbrig.ClientMicros,
			c.Pgbench1.ClientMicros, c.PgbenchN.ClientMicros, c.DbrigMicros/c.Pgbench1.ClientMicros, c.DbrigMicros/c.PgbenchN.ClientMicros,
			human.Thousands(c.Dbrig.NOPM))
		d, t = append(d, c.DbrigMicros), append(t, c.Dbrig.ClientMicros)
		p1, pn = append(p1, c.Pgbench1.ClientMicros), append(pn, c.PgbenchN.ClientMicros)
	}
	fmt.Fprintf(tw, "median\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t\n", median(d), median(t), median(p1), median(pn), f.ClientRatio, f.ClientRatioJN)
	tw.Flush()
	fmt.Fprintln(w, "dbrig records telemetry, as by default; its telemetry's figure is its process's CPU over the measured window only. The goal is judged on the medians' ratio, dbrig / pgbench -j 1.")
}

// printPhases sets the build's phases beside the reference's: its load
// beside the COPY, its keys and ANALYZE beside theirs, the rest (tables,
// routines, the record, connecting) beside nothing. The build runs each
// table's keys and ANALYZE as soon as the table is loaded, while others
// still load, so its load phase holds most of them; the reference runs
// its three steps one after the other.
func printPhases(tw io.Writer, f *Figures) {
	if len(f.BuildPhases) == 0 {
		return
	}
	took := map[string]float64{}
	for _, p := range f.BuildPhases {
		took[p.Name] += p.Seconds
	}
	other := f.BuildSeconds - took["load"] - took["keys"] - took["analyze"]
	rows := []struct {
		name       string
		build, raw float64
	}{{"load (each table's keys, ANALYZE as it ends) / COPY", took["load"], 0}, {"keys (left)", took["keys"], 0}, {"ANALYZE (left)", took["analyze"], 0}, {"the rest", other, 0}}
	if r := f.Raw; r != nil {
		rows[0].raw, rows[1].raw, rows[2].raw, rows[3].raw = r.CopySeconds, r.KeysSeconds, r.AnalyzeSeconds, r.FinishSeconds
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "  build phase: %s (s), build vs raw\t%.2f vs %.2f\t\t\n", r.name, r.build, r.raw)
	}
	if load := took["load"]; load > 0 {
		fmt.Fprintf(tw, "  dbrig's CPU over the build (s), per second of load\t%.1f, %.2f cores\t\t\n", f.BuildCPUSeconds, f.BuildCPUSeconds/load)
	}
	if r := f.Raw; r != nil && r.ServerCPUSeconds > 0 && f.BuildServerCPUSeconds > 0 {
		fmt.Fprintf(tw, "  the server's CPU (s), build vs raw\t%.2f vs %.2f\t\t\n", f.BuildServerCPUSeconds, r.ServerCPUSeconds)
		// On f.CPUs cores, no build takes less wall clock than its CPU,
		// the server's and dbrig's, spread over all of them.
		floor := (f.BuildServerCPUSeconds + f.BuildCPUSeconds) / float64(max(f.CPUs, 1))
		fmt.Fprintf(tw, "  the build's CPU, the server's and dbrig's, over %d cores (s): its floor, / raw\t%.2f, %.2f\t\t\n",
			f.CPUs, floor, floor/r.Seconds)
	}
}

// run is the first run in mode with vus, nil if there is none.
func (f *Figures) run(mode string, vus int) *RunFigures {
	for i, r := range f.Runs {
		if r.ABPair == 0 && r.Mode == mode && r.VUs == vus {
			return &f.Runs[i]
		}
	}
	return nil
}

// printTelemetryCost compares each pair's runs without and with
// telemetry: the client's CPU per thousand transactions, and the change.
func printTelemetryCost(w io.Writer, f *Figures) {
	var off, on []float64
	for _, r := range f.Runs {
		switch {
		case r.ABPair == 0:
		case r.Telemetry:
			on = append(on, r.cpuPerKiloTx())
		default:
			off = append(off, r.cpuPerKiloTx())
		}
	}
	if len(on) == 0 {
		return
	}
	fmt.Fprintln(w, "\n== Telemetry's cost: client CPU ms per 1,000 transactions, procs runs without and with telemetry in turn")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pair\twithout\twith\tchange")
	var sumOff, sumOn float64
	for i := range on {
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%+.1f%%\n", i+1, off[i], on[i], 100*(on[i]/off[i]-1))
		sumOff, sumOn = sumOff+off[i], sumOn+on[i]
	}
	fmt.Fprintf(tw, "all\t%.1f\t%.1f\t%+.1f%%\n", sumOff/float64(len(off)), sumOn/float64(len(on)), 100*(sumOn/sumOff-1))
	tw.Flush()
}
