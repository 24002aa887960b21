//go:build unix

// Command tprocc benchmarks dbrig's TPROC-C against a PostgreSQL server it
// starts itself, and prints the figures the design notes compare with the
// peers (HammerDB, BenchBase, go-tpc) on this machine kind:
//
//   - the time `dbrig build tproc-c` takes, next to a raw binary COPY of the
//     same rows (plus keys and ANALYZE) in the same run, on the same server;
//   - NOPM and the client's CPU for `dbrig run tproc-c`, procs and sql mode.
//
// It is a benchmark, not a test: it prints figures and judges them against
// targets, but only fails when something does not work. bench/tprocc.sh
// builds dbrig and runs it; see -help for the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/workload"
)

// Targets and peers, from /work/shared/design.md (PG 15, 4 warehouses,
// 4 VUs, this machine kind).
const (
	targetRatio = 1.3
	targetNOPM  = 95000
	targetCores = 0.09
	peerNOPM    = 77000 // HammerDB 4.12, PL/pgSQL functions
	peerCores   = 0.27  // HammerDB's client
	targetWH    = 4
	targetVUs   = 4
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
	warehouses int
	loaders    int
	vus        int
	vusHigh    int
	duration   time.Duration
	rampup     time.Duration
	quick      bool
	skipRaw    bool
	skipSQL    bool
	skipRuns   bool
	// telemetryPairs is how many pairs of runs, without and with
	// telemetry, measure what recording it costs the client.
	telemetryPairs int
}

// Figures is what --json writes.
type Figures struct {
	harness.ServerFigures
	Quick         bool                `json:"quick"`
	Warehouses    int                 `json:"warehouses"`
	Loaders       int                 `json:"loaders"`
	BuildSeconds  float64             `json:"build_seconds"`
	Raw           *harness.RawFigures `json:"raw_copy,omitempty"`
	BuildRawRatio float64             `json:"build_raw_ratio,omitempty"`
	Runs          []RunFigures        `json:"runs"`
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
	fs.BoolVar(&o.skipRuns, "skip-runs", false, "only build (and the raw COPY reference); no runs")
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
	if o.warehouses < 1 || o.loaders < 1 || o.vus < 1 || o.vusHigh < 0 || o.duration <= 0 || o.rampup < 0 || o.telemetryPairs < 0 {
		fmt.Fprintln(os.Stderr, "tprocc: --warehouses, --loaders and --vus must be at least 1, --vus-high and --telemetry-pairs at least 0, --duration positive and --rampup not negative")
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

	// 2. The build.
	if err := scratch.Server.CreateDB(ctx, "bench"); err != nil {
		return err
	}
	benchURL := urlFor("bench")
	if err := harness.Checkpoint(ctx, benchURL); err != nil {
		return err
	}
	fmt.Printf("\n== Build: %d warehouses, %d loaders\n", o.warehouses, o.loaders)
	wall, _, err := harness.Timed(ctx, harness.Command(ctx, dbrig, "build", "tproc-c", "--target", benchURL,
		"--warehouses", strconv.Itoa(o.warehouses), "--loaders", strconv.Itoa(o.loaders)))
	if err != nil {
		return err
	}
	fig.BuildSeconds = wall.Seconds()
	fmt.Printf("Build: %.1f s wall clock\n", fig.BuildSeconds)

	// 3. The raw COPY reference.
	if !o.skipRaw {
		fmt.Printf("\n== Raw COPY reference: binary COPY from server-side files, keys and ANALYZE, %d connections\n", o.loaders)
		raw, err := rawCopy(ctx, scratch.Server, urlFor, schema, filepath.Join(scratch.Dir, "copy"), o)
		if err != nil {
			return fmt.Errorf("raw COPY reference: %w", err)
		}
		fig.Raw = raw
		fig.BuildRawRatio = fig.BuildSeconds / raw.Seconds
		fmt.Println(raw)
		fmt.Printf("Build / raw COPY: %.2f\n", fig.BuildRawRatio)
	}

	// 4. The runs, one after another on the same database: each adds
	// orders, which the next one sees, as in HammerDB's usual practice of
	// not rebuilding between runs.
	if !o.skipRuns {
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
			r, err := runOnce(ctx, dbrig, benchURL, filepath.Join(scratch.Dir, fmt.Sprintf("run-%d.json", i+1)), p.vus, p.mode, true, o)
			if err != nil {
				return err
			}
			fig.Runs = append(fig.Runs, r)
		}
		// Without and with telemetry in turn, so that the machine's drift
		// falls on both alike.
		for pair := 1; pair <= o.telemetryPairs; pair++ {
			for _, on := range []bool{false, true} {
				r, err := runOnce(ctx, dbrig, benchURL, filepath.Join(scratch.Dir, fmt.Sprintf("ab-%d-%t.json", pair, on)), o.vus, "procs", on, o)
				if err != nil {
					return err
				}
				r.ABPair = pair
				fig.Runs = append(fig.Runs, r)
			}
		}
	}

	// 5. The figures.
	fmt.Println()
	printTable(os.Stdout, fig, o)
	return harness.WriteFigures(o.JSON, fig)
}

func runOnce(ctx context.Context, dbrig, url, jsonPath string, vus int, mode string, telemetry bool, o options) (RunFigures, error) {
	r := RunFigures{VUs: vus, Mode: mode, Rampup: o.rampup.String(), Duration: o.duration.String(), Telemetry: telemetry}
	if err := harness.Checkpoint(ctx, url); err != nil {
		return r, err
	}
	args := []string{"run", "tproc-c", "--target", url,
		"--vus", strconv.Itoa(vus), "--rampup", o.rampup.String(), "--duration", o.duration.String(),
		"--mode", mode, "--json", jsonPath}
	with := "with telemetry"
	if !telemetry {
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
	r.NOPMClient, r.NOPM, r.TPM = *nopm.Client, *nopm.Client, *tpm.Client
	if nopm.DB != nil && tpm.DB != nil {
		r.NOPM, r.TPM, r.FromDB = *nopm.DB, *tpm.DB, true
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
	schema workload.SQLFile, dir string, o options) (*harness.RawFigures, error) {
	if err := harness.ServerDir(dir, filepath.Join(srv.Dir, "data")); err != nil {
		return nil, err
	}
	return harness.RawCopy{
		Source: urlFor("bench"), Admin: srv, DB: "rawcopy", URLFor: urlFor, Dir: dir,
		Schema: schema, Tables: allTables, Conns: o.loaders,
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

// printTable prints the figures next to their targets and the peers'.
func printTable(w io.Writer, f *Figures, o options) {
	comparable := f.Warehouses == targetWH && !f.Quick
	fmt.Fprintf(w, "== Figures: %d warehouses, %s, %s\n", f.Warehouses, f.Connection, human.FirstLine(f.ServerVersion))
	if !comparable {
		fmt.Fprintf(w, "(targets are for %d warehouses and full-length runs; not judged here)\n", targetWH)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tvalue\ttarget\tverdict\tpeers")
	judge := func(ok bool) string {
		switch {
		case !comparable:
			return "-"
		case ok:
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintf(tw, "build (s)\t%.1f\t\t\tHammerDB 22.6, BenchBase 25.7, go-tpc 99\n", f.BuildSeconds)
	if f.Raw != nil {
		fmt.Fprintf(tw, "raw COPY + keys + ANALYZE (s)\t%.1f\t\t\t≈ 10-13\n", f.Raw.Seconds)
		fmt.Fprintf(tw, "build / raw COPY\t%.2f\t≤ %.1f\t%s\tHammerDB 22.6 / raw 10-13 ≈ 1.7-2.3\n",
			f.BuildRawRatio, targetRatio, judge(f.BuildRawRatio <= targetRatio))
	}
	for _, r := range f.Runs {
		if r.ABPair > 0 {
			continue
		}
		label := fmt.Sprintf("%s, %d VUs", r.Mode, r.VUs)
		isTarget := r.Mode == "procs" && r.VUs == targetVUs
		nopmTarget, coresTarget, nopmVerdict, coresVerdict, nopmPeer, coresPeer := "", "", "", "", "", ""
		if isTarget {
			nopmTarget, coresTarget = "≥ "+human.Thousands(targetNOPM), fmt.Sprintf("≤ %.2f", targetCores)
			nopmVerdict, coresVerdict = judge(r.NOPM >= targetNOPM), judge(r.ClientCores <= targetCores)
			nopmPeer, coresPeer = "HammerDB 4.12 ≈ "+human.Thousands(peerNOPM)+", go-tpc ≈ 40,000, BenchBase ≈ 20,000",
				fmt.Sprintf("HammerDB ≈ %.2f", peerCores)
		}
		src := "db"
		if !r.FromDB {
			src = "client"
		}
		errs := ""
		if r.Errors > 0 {
			errs = fmt.Sprintf(", %d errors", r.Errors)
		}
		fmt.Fprintf(tw, "NOPM %s (%s%s)\t%s\t%s\t%s\t%s\n", label, src, errs, human.Thousands(r.NOPM), nopmTarget, nopmVerdict, nopmPeer)
		fmt.Fprintf(tw, "client cores %s\t%.3f\t%s\t%s\t%s\n", label, r.ClientCores, coresTarget, coresVerdict, coresPeer)
	}
	tw.Flush()
	fmt.Fprintln(w, harness.SettingsLine(f.Settings))
	if len(f.Runs) > 0 {
		fmt.Fprintf(w, "Runs: %s ramp-up, %s measured, on one database without rebuilding, with telemetry as by default; client cores = dbrig's user+system CPU / its wall time (ramp-up included)\n",
			o.rampup, o.duration)
	}
	printTelemetryCost(w, f)
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
