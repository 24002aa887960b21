//go:build unix

// Command procsab measures what a change to tproc-c's PostgreSQL functions
// (procs.sql) does to the server's work per transaction: A and B are two
// versions of the file, each a path or a git revision of the checkout. On
// one server of its own (tuned as bench/tprocc's) and one database built
// once (with --build, one per side, built by the side's own dbrig, so that
// a change to the schema is measured too), it runs `dbrig run tproc-c
// --mode procs` in pairs, A then B, each run on a fresh copy of its side's
// database as built, after the side's functions are put in place and a
// CHECKPOINT, and prints per run the server's CPU and the WAL bytes per
// New-Order (the postmaster's process tree and pg_stat_wal over the
// measured window, from the run's own telemetry) and NOPM, per pair their
// ratios B/A, and the medians of the ratios.
//
// The ratios are taken within one invocation, run against run, since the
// machines it runs on are shared and their absolute speed drifts. It is a
// benchmark, not a test: it prints figures and only fails when something
// does not work. bench/procsab.sh builds dbrig and runs it; see -help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/jackc/pgx/v5"
)

// sqlDir holds tproc-c's SQL; procsFile is the file A and B replace.
const (
	sqlDir    = "internal/workload/tprocc/sql"
	procsFile = sqlDir + "/postgres/procs.sql"
)

type options struct {
	harness.Common
	a, b       string
	pairs      int
	warehouses int
	vus        int
	duration   time.Duration
	rampup     time.Duration
	// statements preloads pg_stat_statements and reports each function's
	// mean time per call in each run.
	statements bool
	// build gives each side a database of its own, built by the dbrig of
	// its revision: a change to the schema (its physical design) is then
	// measured, not only one to the functions.
	build bool
}

func main() {
	var o options
	fs := flag.CommandLine
	o.Flags(fs)
	fs.StringVar(&o.a, "a", "HEAD", "side A: a procs.sql file, or a git revision of the checkout whose "+procsFile+" is taken")
	fs.StringVar(&o.b, "b", ".", "side B: as --a; \".\" is the checkout's working tree")
	fs.IntVar(&o.pairs, "pairs", 3, "pairs of runs, A then B")
	fs.IntVar(&o.warehouses, "warehouses", 4, "warehouses to build")
	fs.IntVar(&o.vus, "vus", 4, "virtual users of each run")
	fs.DurationVar(&o.duration, "duration", 25*time.Second, "measured window of each run")
	fs.DurationVar(&o.rampup, "rampup", 3*time.Second, "ramp-up of each run")
	fs.BoolVar(&o.statements, "statements", false, "preload pg_stat_statements and print each function's mean time per call")
	fs.BoolVar(&o.build, "build", false, "build each side's database with the dbrig of its revision (--a and --b then name revisions, or . for the checkout), to measure a change to the schema")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "procsab: unexpected argument %q; see -help\n", flag.Arg(0))
		os.Exit(2)
	}
	if o.pairs < 1 || o.warehouses < 1 || o.vus < 1 || o.duration <= 0 || o.rampup < 0 {
		fmt.Fprintln(os.Stderr, "procsab: --pairs, --warehouses and --vus must be at least 1, --duration positive and --rampup not negative")
		os.Exit(2)
	}
	repo, err := harness.FindRepo(o.Repo)
	if err != nil {
		fmt.Fprintf(os.Stderr, "procsab: %v\n", err)
		os.Exit(2)
	}
	var sides [2]side
	for i, src := range []string{o.a, o.b} {
		if sides[i], err = loadSide(repo, src); err == nil && o.build && sides[i].rev == "" && src != "." {
			err = errors.New("--build builds with the dbrig of a git revision, or of the checkout (.), not of a file")
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "procsab: --%s %s: %v\n", "ab"[i:i+1], src, err)
			os.Exit(2)
		}
	}
	harness.Main("procsab", func(ctx context.Context) error { return run(ctx, o, sides) })
}

func run(ctx context.Context, o options, sides [2]side) (err error) {
	scratch, dbrig, _, err := o.Setup(ctx, "procsab", sqlDir)
	if err != nil {
		return err
	}
	defer func() { err = scratch.Close(o.Keep, err) }()
	var more map[string]string
	if o.statements {
		more = map[string]string{"shared_preload_libraries": "pg_stat_statements"}
	}
	urlFor, server, err := scratch.TunedServerWith(ctx, o.PgBin, o.Socket, more)
	if err != nil {
		return err
	}
	// One database, built once, for both sides; with --build, one each,
	// built by the side's own dbrig. Either is kept as built, and each
	// run starts from that copy.
	dbs := [2]string{"bench", "bench"}
	if o.build {
		dbs = [2]string{"bench_a", "bench_b"}
	}
	var kept [2]*harness.Kept
	for i, db := range dbs {
		if i == 1 && db == dbs[0] {
			kept[1] = kept[0]
			break
		}
		if kept[i], err = buildSide(ctx, scratch, urlFor, db, dbrig, sides[i], o); err != nil {
			return err
		}
	}
	fig := &Figures{ServerFigures: server, A: sides[0].label, B: sides[1].label, Warehouses: o.warehouses,
		VUs: o.vus, Rampup: o.rampup.String(), Duration: o.duration.String(), Built: o.build}
	for pair := 1; pair <= o.pairs; pair++ {
		for i, s := range sides {
			r, err := runSide(ctx, kept[i], urlFor(kept[i].DB), dbrig, filepath.Join(scratch.Dir, fmt.Sprintf("run-%d-%d.json", pair, i)), s, o)
			if err != nil {
				return err
			}
			r.Pair, r.Side = pair, "AB"[i:i+1]
			fig.Runs = append(fig.Runs, r)
		}
	}
	fmt.Println()
	fig.print(os.Stdout)
	return harness.WriteFigures(o.JSON, fig)
}

// buildSide builds database db with tproc-c's warehouses and keeps a copy
// of it: with --build, by the dbrig of s's revision (the checkout's for
// the working tree), else by the one measured.
func buildSide(ctx context.Context, scratch *harness.Scratch, urlFor func(string) string, db, dbrig string, s side, o options) (*harness.Kept, error) {
	if err := scratch.Server.CreateDB(ctx, db); err != nil {
		return nil, err
	}
	builder, by := dbrig, "the dbrig measured"
	if o.build && s.rev != "" {
		var err error
		if builder, err = scratch.DbrigAt(ctx, o.Repo, s.rev); err != nil {
			return nil, err
		}
		by = "dbrig at " + s.rev
	}
	fmt.Printf("\n== Build of %s: %d warehouses, by %s\n", db, o.warehouses, by)
	if _, _, err := harness.Timed(ctx, harness.Command(ctx, builder, "build", "tproc-c", "--target", urlFor(db),
		"--warehouses", strconv.Itoa(o.warehouses))); err != nil {
		return nil, err
	}
	if o.statements {
		// In the database itself, where perCall reads it.
		conn, err := pgx.Connect(ctx, urlFor(db))
		if err != nil {
			return nil, err
		}
		_, err = conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
		conn.Close(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
	}
	return harness.Keep(ctx, urlFor("postgres"), db)
}
