//go:build unix

// Command blockio measures what block-io's client costs: the CPU `dbrig
// run block-io` uses per 1,000 logical reads it drives, in procs and sql
// modes, against pgbench doing the same range reads (-M prepared, a C
// client with nothing to record: the floor), and in loop mode, whose
// sessions loop inside the database and which pgbench has no match for.
// All run in one invocation, on one server, with the same clients and
// duration, in pairs back to back, so that the ratios to pgbench and
// between modes are free of the machine's drift from day to day.
//
// Both clients' CPU is their whole process's user + system time; the
// logical reads they drove are the database's own count (blks_hit +
// blks_read in pg_stat_database) across the process's life, so dbrig's
// start-up and report weigh on it as pgbench's connection set-up does on
// pgbench. The table is small enough to sit in shared_buffers, and a
// first unmeasured run reads it in, so the server does no I/O and the
// client's share of the CPU is as large as it gets.
//
// It is a benchmark, not a test: it prints figures and only fails when
// something does not work. bench/blockio.sh builds dbrig and runs it; see
// -help for the flags.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	pgtarget "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/jackc/pgx/v5"
)

// The clients and modes measured.
const (
	clientDbrig   = "dbrig"
	clientPgbench = "pgbench"
	modeProcs     = "procs"
	modeSQL       = "sql"
	modeLoop      = "loop"
)

// allModes are the modes measured by default; pgbench runs the same
// statements as dbrig's procs and sql modes, and has no loop.
var allModes = []string{modeProcs, modeSQL, modeLoop}

// pgbenchRuns says whether pgbench runs beside dbrig in mode.
func pgbenchRuns(mode string) bool { return mode != modeLoop }

// opDir holds block-io's SQL, whose statements pgbench runs too.
const opDir = "internal/workload/blockio/sql"

// table is the one table a default build makes, which every session reads.
const table = "blockio1"

// pgbenchScript is the range read dbrig's block-io makes in mode, from
// its own SQL, as a pgbench script: WORK_UNIT keys (lo, hi] of the table,
// hi uniform over it as dbrig draws it. pgbench sends the variables as
// parameters of its prepared statement, as dbrig does.
func pgbenchScript(op workload.SQLFile, mode string) string {
	name := "read"
	if mode == modeProcs {
		name = "call:read"
	}
	stmt := strings.NewReplacer("{table}", table, "$1", ":lo", "$2", ":hi").Replace(op.Get(name))
	return "\\set hi random(:unit, :blocks)\n\\set lo :hi - :unit\n" + stmt + ";\n"
}

// setting is one statement of block-io's session set-up.
var setting = regexp.MustCompile(`(?i)^SET\s+(\w+)\s*(?:=|TO)\s*(\w+)$`)

// pgbenchOptions is block-io's session set-up (no bitmap scans, which
// would read the blocks in order rather than one by one) as the
// connection options of PGOPTIONS: pgbench runs no statement once per
// session.
func pgbenchOptions(op workload.SQLFile) (string, error) {
	var opts []string
	for _, stmt := range op.Statements("session") {
		m := setting.FindStringSubmatch(stmt)
		if m == nil {
			return "", fmt.Errorf("block-io's session runs %q, which pgbench cannot: only SET name = value", stmt)
		}
		opts = append(opts, "-c "+m[1]+"="+m[2])
	}
	return strings.Join(opts, " "), nil
}

// shownSettings are printed and recorded: the cache the table must fit.
var shownSettings = []string{"shared_buffers", "block_size"}

type options struct {
	dbrig       string
	repo        string
	pgBin       string
	pgbench     string
	baseDir     string
	target      string
	jsonPath    string
	scale       string
	vus         int
	jobs        int
	workUnit    int
	duration    time.Duration
	prewarm     time.Duration
	pairs       int
	modes       []string
	socket      bool
	noTelemetry bool
	keep        bool
}

// Figures is what --json writes.
type Figures struct {
	harness.ServerFigures
	// LoadAverage is /proc/loadavg's 1-minute figure before and after:
	// other work on the machine shows in it.
	LoadAverage    [2]string `json:"load_average"`
	Pgbench        string    `json:"pgbench"`
	PgbenchJobs    int       `json:"pgbench_jobs"`
	Blocks         int64     `json:"table_blocks"`
	TableBytes     int64     `json:"table_bytes"`
	WorkUnit       int       `json:"work_unit"`
	VUs            int       `json:"vus"`
	Seconds        int       `json:"seconds"`
	DbrigTelemetry bool      `json:"dbrig_telemetry"`
	Runs           []Run     `json:"runs"`
}

// Run is one client process.
type Run struct {
	Pair   int    `json:"pair"`
	Client string `json:"client"`
	Mode   string `json:"mode"`
	// WallSeconds and CPUSeconds cover the whole process: connecting,
	// the run and the report. UserSeconds is CPUSeconds' share outside
	// the kernel, which sends and receives for both clients alike.
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"client_cpu_seconds"`
	UserSeconds float64 `json:"client_user_seconds"`
	// Ops are the range reads the client counted.
	Ops    int64 `json:"ops"`
	Errors int64 `json:"errors"`
	// LogicalReads and CacheMisses are the database's blks_hit +
	// blks_read and blks_read across the process's life.
	LogicalReads int64 `json:"logical_reads"`
	CacheMisses  int64 `json:"cache_misses"`
	// ClientLogicalReads is dbrig's own count of the blocks its
	// operations touched; pgbench keeps none.
	ClientLogicalReads int64 `json:"client_logical_reads,omitempty"`
	// WindowClientPct is dbrig's CPU over its measured window alone, as
	// its telemetry saw it, in % of one core; absent without telemetry.
	WindowClientPct *float64 `json:"window_client_pct_of_core,omitempty"`
}

// corePct is the client's CPU over its life, in % of one core.
func (r Run) corePct() float64 { return 100 * r.CPUSeconds / r.WallSeconds }

// usPerKiloReads is the client's CPU microseconds per 1,000 logical reads.
func (r Run) usPerKiloReads() float64 { return r.CPUSeconds * 1e9 / float64(r.LogicalReads) }

func (r Run) blocksPerOp() float64 { return float64(r.LogicalReads) / float64(r.Ops) }

// timed runs the client's process, keeping its times.
func (r *Run) timed(ctx context.Context, cmd *exec.Cmd) error {
	wall, cpu, err := harness.Timed(ctx, cmd)
	if err != nil {
		return err
	}
	r.WallSeconds, r.CPUSeconds, r.UserSeconds = wall.Seconds(), cpu.Seconds(), cmd.ProcessState.UserTime().Seconds()
	return nil
}

func main() {
	var o options
	fs := flag.CommandLine
	fs.StringVar(&o.dbrig, "dbrig", "", "dbrig binary to measure (default: go build ./cmd/dbrig into the temp dir)")
	fs.StringVar(&o.repo, "repo", "", "repository root, for block-io's statements and to build dbrig (default: found from the working directory)")
	fs.StringVar(&o.pgBin, "pg-bin", "", "directory of postgres, initdb and pg_ctl (default: $PG_BIN, pg_config, PATH)")
	fs.StringVar(&o.pgbench, "pgbench", "", "pgbench binary (default: the one beside postgres, else PATH)")
	fs.StringVar(&o.baseDir, "dir", "", "where the temp dir for the server goes (default: $TMPDIR or /tmp)")
	fs.StringVar(&o.target, "target", "", "measure on this PostgreSQL database instead of a server of our own; its block-io tables are rebuilt (--force)")
	fs.StringVar(&o.jsonPath, "json", "", "also write the figures as JSON to this file")
	fs.StringVar(&o.scale, "scale", "64MB", "block-io's --scale: small enough for shared_buffers (128MB by default)")
	fs.IntVar(&o.vus, "vus", 4, "dbrig's virtual users, and pgbench's clients")
	fs.IntVar(&o.jobs, "pgbench-jobs", 1, "pgbench's threads (-j): one serves all clients at the least CPU")
	fs.IntVar(&o.workUnit, "work-unit", 64, "keys each range read reads")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "length of each run, in whole seconds (dbrig has no ramp-up)")
	fs.DurationVar(&o.prewarm, "prewarm", 5*time.Second, "the unmeasured dbrig run that reads the table into the cache")
	fs.IntVar(&o.pairs, "pairs", 3, "pairs of dbrig and pgbench runs in each mode")
	var modeList string
	fs.StringVar(&modeList, "modes", strings.Join(allModes, ","), "block-io modes to measure, in this order in each pair (pgbench runs beside procs and sql)")
	fs.BoolVar(&o.socket, "socket", false, "connect over the unix socket instead of TCP loopback 127.0.0.1 (not with --target)")
	fs.BoolVar(&o.noTelemetry, "no-telemetry", false, "run dbrig without its telemetry, which it records by default and pgbench has none of")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp dir (server stopped) for inspection")
	flag.Parse()
	o.modes = strings.Split(modeList, ",")
	switch {
	case slices.ContainsFunc(o.modes, func(m string) bool { return !slices.Contains(allModes, m) }):
		fmt.Fprintf(os.Stderr, "blockio: --modes %q: use some of %s\n", modeList, strings.Join(allModes, ","))
		os.Exit(2)
	case flag.NArg() > 0:
		fmt.Fprintf(os.Stderr, "blockio: unexpected argument %q; see -help\n", flag.Arg(0))
		os.Exit(2)
	case o.vus < 1 || o.jobs < 1 || o.workUnit < 1 || o.pairs < 1 || o.prewarm < 0:
		fmt.Fprintln(os.Stderr, "blockio: --vus, --pgbench-jobs, --work-unit and --pairs must be at least 1, --prewarm not negative")
		os.Exit(2)
	case o.duration < time.Second || o.duration%time.Second != 0:
		// pgbench's -T takes whole seconds.
		fmt.Fprintln(os.Stderr, "blockio: --duration must be whole seconds, at least 1s")
		os.Exit(2)
	case o.socket && o.target != "":
		fmt.Fprintln(os.Stderr, "blockio: --socket is for a server of our own; put the socket in --target's URL")
		os.Exit(2)
	}
	harness.Main("blockio", func(ctx context.Context) error { return run(ctx, o) })
}

// bench is one invocation's clients, server and figures.
type bench struct {
	o              options
	scratch        *harness.Scratch
	dbrig, pgbench string
	op             workload.SQLFile
	pgOptions      string
	url            string
	ctl            *pgx.Conn
	fig            *Figures
}

func run(ctx context.Context, o options) (err error) {
	scratch, err := harness.NewScratch("blockio", o.baseDir)
	if err != nil {
		return err
	}
	defer func() { err = scratch.Close(o.keep, err) }()
	b, err := newBench(ctx, o, scratch)
	if err != nil {
		return err
	}
	if err := b.connect(ctx); err != nil {
		return err
	}
	defer b.ctl.Close(context.WithoutCancel(ctx))
	if err := b.build(ctx); err != nil {
		return err
	}
	if err := b.pairs(ctx); err != nil {
		return err
	}
	b.fig.LoadAverage[1] = loadAverage()

	fmt.Println()
	printTable(os.Stdout, b.fig)
	return harness.WriteFigures(o.jsonPath, b.fig)
}

// newBench finds the clients and block-io's statements.
func newBench(ctx context.Context, o options, scratch *harness.Scratch) (*bench, error) {
	b := &bench{o: o, scratch: scratch}
	var err error
	if b.pgbench, err = findPgbench(o.pgbench, o.pgBin); err != nil {
		return nil, err
	}
	repo, err := harness.FindRepo(o.repo)
	if err != nil {
		return nil, err
	}
	if b.op, err = workload.LoadSQL(os.DirFS(repo), opDir, pgtarget.Dialect, "op.sql"); err != nil {
		return nil, fmt.Errorf("reading block-io's statements: %w", err)
	}
	if b.pgOptions, err = pgbenchOptions(b.op); err != nil {
		return nil, err
	}
	if b.dbrig, err = scratch.Dbrig(ctx, o.dbrig, repo); err != nil {
		return nil, err
	}
	b.fig = &Figures{ServerFigures: harness.ServerFigures{StartedAt: time.Now().UTC(), CPUs: runtime.NumCPU()}, Pgbench: b.pgbench, PgbenchJobs: o.jobs,
		WorkUnit: o.workUnit, VUs: o.vus, Seconds: int(o.duration / time.Second), DbrigTelemetry: !o.noTelemetry}
	b.fig.LoadAverage[0] = loadAverage()
	return b, nil
}

// connect starts a server of our own, unless --target names one, and
// connects to its database.
func (b *bench) connect(ctx context.Context) error {
	o, fig := b.o, b.fig
	b.url = o.target
	fig.Connection = "--target"
	if b.url == "" {
		srv, err := b.scratch.StartServer(ctx, o.pgBin, nil)
		if err != nil {
			return err
		}
		if err := srv.CreateDB(ctx, "bench"); err != nil {
			return err
		}
		b.url, fig.Connection = srv.URLFor("bench"), "TCP loopback 127.0.0.1"
		if o.socket {
			b.url, fig.Connection = srv.SocketURLFor("bench"), "unix socket "+srv.SocketDir()
		}
	}
	ctl, err := pgx.Connect(ctx, b.url)
	if err != nil {
		return err
	}
	b.ctl = ctl
	if err := ctl.QueryRow(ctx, "SELECT 'PostgreSQL ' || current_setting('server_version')").Scan(&fig.ServerVersion); err != nil {
		return err
	}
	if fig.Settings, err = harness.ReadSettings(ctx, b.url, shownSettings); err != nil {
		return err
	}
	fmt.Printf("Server: %s, connecting over %s\n", fig.ServerVersion, fig.Connection)
	fmt.Printf("Settings:")
	for _, name := range shownSettings {
		fmt.Printf(" %s=%s", name, fig.Settings[name])
	}
	fmt.Printf("\nMachine: %d CPUs, load average %s (shared with other work: figures are noisy)\n", fig.CPUs, fig.LoadAverage[0])
	fmt.Printf("pgbench: %s\n", b.pgbench)
	return nil
}

// build makes the table and reads it into the cache.
func (b *bench) build(ctx context.Context) error {
	o, fig := b.o, b.fig
	fmt.Printf("\n== Build: block-io --scale %s\n", o.scale)
	build := []string{"build", "block-io", "--target", b.url, "--scale", o.scale}
	if o.target != "" {
		build = append(build, "--force")
	}
	if _, _, err := harness.Timed(ctx, harness.Command(ctx, b.dbrig, build...)); err != nil {
		return err
	}
	var sharedBuffers int64
	err := b.ctl.QueryRow(ctx, `SELECT scale, pg_total_relation_size('blockio1'), pg_size_bytes(current_setting('shared_buffers'))
		FROM dbrig_blockio`).Scan(&fig.Blocks, &fig.TableBytes, &sharedBuffers)
	if err != nil {
		return fmt.Errorf("reading what the build made: %w", err)
	}
	if fig.TableBytes > sharedBuffers {
		fmt.Printf("Warning: the table and its index (%s) do not fit in shared_buffers (%s): the server will read, and the runs measure that too\n",
			human.FormatSize(fig.TableBytes), human.FormatSize(sharedBuffers))
	}
	if o.prewarm > 0 {
		fmt.Printf("\n== Prewarm: dbrig procs, %s, not measured\n", o.prewarm)
		args := append(dbrigArgs(b.url, o, modeProcs, filepath.Join(b.scratch.Dir, "prewarm.json"), o.prewarm), "--no-telemetry")
		if _, _, err := harness.Timed(ctx, harness.Command(ctx, b.dbrig, args...)); err != nil {
			return err
		}
	}
	return nil
}

// pairs runs, in each mode, dbrig and pgbench back to back, which goes
// first alternating from pair to pair so that neither always runs on a
// machine the other has just warmed or tired.
func (b *bench) pairs(ctx context.Context) error {
	o := b.o
	scripts := map[string]string{}
	for _, mode := range o.modes {
		scripts[mode] = filepath.Join(b.scratch.Dir, mode+".pgbench")
		if err := os.WriteFile(scripts[mode], []byte(pgbenchScript(b.op, mode)), 0o644); err != nil {
			return err
		}
	}
	for pair := 1; pair <= o.pairs; pair++ {
		clients := []string{clientDbrig, clientPgbench}
		if pair%2 == 0 {
			clients[0], clients[1] = clients[1], clients[0]
		}
		for _, mode := range o.modes {
			for _, client := range clients {
				if client == clientPgbench && !pgbenchRuns(mode) {
					continue
				}
				fmt.Printf("\n== Pair %d: %s, %s mode, %d clients, %s\n", pair, client, mode, o.vus, o.duration)
				r := Run{Pair: pair, Client: client, Mode: mode}
				do := func() error {
					return runDbrig(ctx, b.dbrig, b.url, filepath.Join(b.scratch.Dir, fmt.Sprintf("%d-%s.json", pair, mode)), mode, o, &r)
				}
				if client == clientPgbench {
					do = func() error {
						return runPgbench(ctx, b.pgbench, b.url, scripts[mode], b.pgOptions, b.fig.Blocks, o, &r)
					}
				}
				if err := measure(ctx, b.ctl, do, &r); err != nil {
					return err
				}
				fmt.Printf("Client: %.2f CPU s (%.2f user) over %.1f s wall, %.2f%% of a core; %s ops, %s logical reads (%.1f a range read): %.1f µs of client CPU per 1,000\n",
					r.CPUSeconds, r.UserSeconds, r.WallSeconds, r.corePct(), human.Thousands(float64(r.Ops)), human.Thousands(float64(r.LogicalReads)), r.blocksPerOp(), r.usPerKiloReads())
				b.fig.Runs = append(b.fig.Runs, r)
			}
		}
	}
	return nil
}

// findPgbench returns explicit, or the pgbench of the server's own
// installation: Debian's /usr/bin/pgbench is a Perl wrapper whose start-up
// would count as the client's CPU. PATH is the last resort.
func findPgbench(explicit, pgBin string) (string, error) {
	if explicit != "" {
		return exec.LookPath(explicit)
	}
	if dir, err := postgres.FindBinDir(pgBin); err == nil {
		if p, err := exec.LookPath(filepath.Join(dir, "pgbench")); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("pgbench")
	if err != nil {
		return "", errors.New("no pgbench found (Debian ships it with the server, postgresql-15; or pass --pgbench)")
	}
	return p, nil
}

func dbrigArgs(url string, o options, mode, jsonPath string, d time.Duration) []string {
	return []string{"run", "block-io", "--target", url, "--mode", mode,
		"--vus", strconv.Itoa(o.vus), "--work-unit", strconv.Itoa(o.workUnit),
		"--rampup", "0s", "--duration", d.String(), "--json", jsonPath}
}

// runDbrig runs dbrig without a ramp-up, so that the operations its
// result counts are all it made, as pgbench's are.
func runDbrig(ctx context.Context, dbrig, url, jsonPath, mode string, o options, r *Run) error {
	args := dbrigArgs(url, o, mode, jsonPath, o.duration)
	if o.noTelemetry {
		args = append(args, "--no-telemetry")
	}
	if err := r.timed(ctx, harness.Command(ctx, dbrig, args...)); err != nil {
		return err
	}
	doc, err := result.Read(jsonPath)
	if err != nil {
		return err
	}
	if doc.Interrupted {
		return fmt.Errorf("the dbrig %s run was interrupted", mode)
	}
	for _, tx := range doc.Transactions {
		r.Ops += tx.Count
		r.Errors += tx.Errors
	}
	if mode == modeLoop {
		// Its transactions are calls of the loop; the loop counts the
		// operations.
		r.Ops = doc.Counters["reads"] + doc.Counters["updates"]
	}
	r.ClientLogicalReads = doc.Counters["blocks"]
	if doc.Telemetry != nil {
		if h := telemetry.Summarize(doc.Telemetry).Host; h != nil {
			pct := h.Client * float64(runtime.NumCPU())
			r.WindowClientPct = &pct
		}
	}
	return nil
}

// pgbenchCount reads a count from pgbench's summary, if it has that line.
func pgbenchCount(out []byte, what string) (n int64, ok bool) {
	m := regexp.MustCompile(`(?m)^number of ` + what + `: (\d+)`).FindSubmatch(out)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(m[1]), 10, 64)
	return n, err == nil
}

func runPgbench(ctx context.Context, pgbench, url, script, pgOptions string, blocks int64, o options, r *Run) error {
	cmd := harness.Command(ctx, pgbench, "-n", "-M", "prepared", "-f", script,
		"-c", strconv.Itoa(o.vus), "-j", strconv.Itoa(o.jobs), "-T", strconv.Itoa(int(o.duration/time.Second)),
		"-D", "blocks="+strconv.FormatInt(blocks, 10), "-D", "unit="+strconv.Itoa(o.workUnit), url)
	cmd.Env = append(os.Environ(), "PGOPTIONS="+strings.TrimSpace(os.Getenv("PGOPTIONS")+" "+pgOptions))
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(os.Stdout, &out)
	if err := r.timed(ctx, cmd); err != nil {
		return err
	}
	var ok bool
	if r.Ops, ok = pgbenchCount(out.Bytes(), "transactions actually processed"); !ok {
		return errors.New("pgbench printed no number of transactions processed")
	}
	// pgbench before 15 has no such line: a failed statement ended its
	// client, and the run with an error.
	r.Errors, _ = pgbenchCount(out.Bytes(), "failed transactions")
	return nil
}

// measure runs one client between two readings of the database's block
// counters, each taken once no other session is connected: a backend
// adds its counts to pg_stat_database as it exits, if not before.
func measure(ctx context.Context, ctl *pgx.Conn, run func() error, r *Run) error {
	logical0, misses0, err := readCounters(ctx, ctl)
	if err != nil {
		return err
	}
	if err := run(); err != nil {
		return err
	}
	logical1, misses1, err := readCounters(ctx, ctl)
	if err != nil {
		return err
	}
	r.LogicalReads, r.CacheMisses = logical1-logical0, misses1-misses0
	if r.Errors > 0 {
		return fmt.Errorf("%s %s had %d failed range reads: its figures would not be the work asked for", r.Client, r.Mode, r.Errors)
	}
	if r.Ops == 0 || r.LogicalReads <= 0 {
		return fmt.Errorf("%s %s made %d range reads and the database counted %d logical reads", r.Client, r.Mode, r.Ops, r.LogicalReads)
	}
	return nil
}

// sessionWait is how long the sessions of a client that has exited may
// take to end.
const sessionWait = 30 * time.Second

func readCounters(ctx context.Context, ctl *pgx.Conn) (logical, misses int64, err error) {
	deadline := time.Now().Add(sessionWait)
	for {
		var others int
		err := ctl.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&others)
		if err != nil {
			return 0, 0, err
		}
		if others == 0 {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d other sessions are still connected to the database after %s: its counters would count their reads too", others, sessionWait)
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	err = ctl.QueryRow(ctx, `SELECT blks_hit + blks_read, blks_read FROM pg_stat_database WHERE datname = current_database()`).Scan(&logical, &misses)
	return logical, misses, err
}

// loadAverage is the 1-minute load average, or "?" where there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// printTable prints each client's CPU per 1,000 logical reads, pair by
// pair, and its ratio to pgbench's in the same mode and pair; then its
// CPU as a share of one core, over its life and over its window, and the
// logical reads per second it drove.
func printTable(w io.Writer, f *Figures) {
	fmt.Fprintf(w, "== Client CPU µs per 1,000 logical reads: %d clients, %d s a run, %s\n", f.VUs, f.Seconds, f.ServerVersion)
	type key struct{ client, mode string }
	byKey := map[key][]Run{}
	var modes []string
	for _, r := range f.Runs {
		k := key{r.Client, r.Mode}
		if !slices.Contains(modes, r.Mode) {
			modes = append(modes, r.Mode)
		}
		byKey[k] = append(byKey[k], r)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "client\tmode")
	for i := range len(byKey[key{clientDbrig, modes[0]}]) {
		fmt.Fprintf(tw, "\tpair %d", i+1)
	}
	fmt.Fprintln(tw, "\tmean\tuser\t/ pgbench, each pair\t/ pgbench\tblocks/op\tops/s\tlogical reads/s\t% of a core\tin window\tcache misses")
	for _, mode := range modes {
		floor := byKey[key{clientPgbench, mode}]
		for _, client := range []string{clientDbrig, clientPgbench} {
			runs := byKey[key{client, mode}]
			if len(runs) == 0 {
				continue
			}
			var sum, cpu, user, blocks, ops, lio, core float64
			var misses int64
			fmt.Fprintf(tw, "%s\t%s", client, mode)
			for _, r := range runs {
				fmt.Fprintf(tw, "\t%.1f", r.usPerKiloReads())
				sum += r.usPerKiloReads()
				cpu, user = cpu+r.CPUSeconds, user+r.UserSeconds
				blocks += r.blocksPerOp()
				ops += float64(r.Ops) / float64(f.Seconds)
				lio += float64(r.LogicalReads) / float64(f.Seconds)
				core += r.corePct()
				misses += r.CacheMisses
			}
			n := float64(len(runs))
			fmt.Fprintf(tw, "\t%.1f\t%.0f%%\t%s\t%.1f\t%s\t%s\t%.2f%%\t%s\t%d\n", sum/n, 100*user/cpu, ratios(runs, floor), blocks/n,
				human.Thousands(ops/n), human.Thousands(lio/n), core/n, windowPct(runs), misses)
		}
	}
	tw.Flush()
	tele := "with its telemetry, as by default"
	if !f.DbrigTelemetry {
		tele = "without telemetry"
	}
	fmt.Fprintf(w, "Client CPU: each process's user+system time, start to exit (user: the share outside the kernel; %% of a core: over its wall time; in window: dbrig's telemetry over the measured window); logical reads: the database's blks_hit+blks_read over the same span.\n")
	fmt.Fprintf(w, "dbrig %s, no ramp-up; pgbench -M prepared -j %d. Table: %d blocks, %s, shared_buffers=%s. %d CPUs, load average %s before and %s after (the runs' own processes count in it).\n",
		tele, f.PgbenchJobs, f.Blocks, human.FormatSize(f.TableBytes), f.Settings["shared_buffers"], f.CPUs, f.LoadAverage[0], f.LoadAverage[1])
}

// windowPct is the runs' mean CPU over their windows in % of a core, as
// their telemetry saw it; "-" where it saw none.
func windowPct(runs []Run) string {
	var sum float64
	for _, r := range runs {
		if r.WindowClientPct == nil {
			return "-"
		}
		sum += *r.WindowClientPct
	}
	return fmt.Sprintf("%.2f%%", sum/float64(len(runs)))
}

// ratios are two columns: each run's CPU per logical read over the
// floor's in the same pair, and the ratio of the means; empty for the
// floor itself.
func ratios(runs, floor []Run) string {
	if len(floor) == 0 || runs[0].Client == floor[0].Client {
		return "\t"
	}
	var each []string
	var sum, floorSum float64
	for i, r := range runs {
		each = append(each, fmt.Sprintf("%.2f", r.usPerKiloReads()/floor[i].usPerKiloReads()))
		sum += r.usPerKiloReads()
		floorSum += floor[i].usPerKiloReads()
	}
	return fmt.Sprintf("%s\t%.2f", strings.Join(each, " "), sum/floorSum)
}
