//go:build unix

// Command terminals benchmarks what keyed TPROC-C terminals cost dbrig
// when they share a pool of sessions (issue 22), against a PostgreSQL 15
// server it starts itself. For each point, thousands of terminals with
// the specification's keying and think times, 200 a warehouse, on a
// session per 100 terminals, it prints:
//
//   - dbrig's peak RSS, per terminal, and its RSS at the measured
//     window's start and end (sampled at 1 Hz), which should stay flat;
//   - the client's CPU in cores, over the run and over the window;
//   - the server's client sessions: the most at once in a 1 Hz poll of
//     pg_stat_activity, and how many pg_stat_database counted opening;
//   - the efficiency, the database's and the client's NOPM and TPM;
//   - the p90 of New-Order's response time and of the wait for a session.
//
// With --parts N each point runs as N dbrig processes, the parts of one
// run (run --part k/N, issue 23), merged with dbrig merge: it prints each
// part's peak RSS and CPU, and the merged run's figures.
//
// Built databases can be kept in a directory and reused (--reuse), as
// the 50 warehouses of 10,000 terminals take minutes to build. It is a
// benchmark, not a test: it judges the figures against issue 22's goals
// but only fails when something does not work. bench/terminals.sh builds
// dbrig and runs it; see -help for the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
)

// The shape of every point: terminals a warehouse and a session.
const (
	perWarehouse = 200
	perSession   = 100
)

type options struct {
	harness.Common
	terminals  []int
	warehouses int
	sessions   int
	loaders    int
	rampup     time.Duration
	duration   time.Duration
	quick      bool
	pgbouncer  bool
	// parts, above 1, runs each point as that many dbrig processes of one
	// run (--part), merged.
	parts int
}

func main() {
	o := options{terminals: []int{1000, 2000, 5000, 10000}}
	fs := flag.CommandLine
	o.Flags(fs)
	fs.StringVar(&o.Reuse, "reuse", "", "keep the server and the databases it builds in this dir, and reuse those found there (a database per warehouse count, built once)")
	fs.Func("terminals", "comma-separated terminal counts, one point each (default 1000,2000,5000,10000)", func(s string) (err error) {
		o.terminals, err = harness.ParseCounts(s)
		return err
	})
	fs.IntVar(&o.warehouses, "warehouses", 0, "warehouses of every point (default: terminals/200, at least 1)")
	fs.IntVar(&o.sessions, "connections", 0, "sessions of every point (default: terminals/100, at least 1)")
	fs.IntVar(&o.loaders, "loaders", 2, "parallel loaders for the builds")
	fs.DurationVar(&o.rampup, "rampup", time.Minute, "ramp-up of each point: terminals start evenly over it (a keyed terminal's cycle is about 21 s)")
	fs.DurationVar(&o.duration, "duration", 2*time.Minute, "measured window of each point")
	fs.BoolVar(&o.quick, "quick", false, "smoke run: 1 warehouse, 100 terminals on 2 sessions, 10s ramp-up, 30s window (flags given explicitly still win)")
	fs.IntVar(&o.parts, "parts", 1, "run each point as N dbrig processes, parts of one run (run --part k/N), merged with dbrig merge")
	fs.BoolVar(&o.pgbouncer, "pgbouncer", false, "also run the first point through pgbouncer in transaction pooling mode, if its binary is installed")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "terminals: unexpected argument %q; see -help\n", flag.Arg(0))
		os.Exit(2)
	}
	if o.quick {
		o.applyQuick()
	}
	if o.warehouses < 0 || o.sessions < 0 || o.loaders < 1 || o.parts < 1 || o.duration <= 0 || o.rampup < 0 {
		fmt.Fprintln(os.Stderr, "terminals: --warehouses and --connections must not be negative, --loaders and --parts at least 1, --duration positive and --rampup not negative")
		os.Exit(2)
	}
	harness.Main("terminals", func(ctx context.Context) error { return run(ctx, o) })
}

// applyQuick sets the smoke run's shape, where no flag set it.
func (o *options) applyQuick() {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	defaults := []struct {
		name  string
		apply func()
	}{
		{"terminals", func() { o.terminals = []int{100} }},
		{"warehouses", func() { o.warehouses = 1 }},
		{"connections", func() { o.sessions = 2 }},
		{"rampup", func() { o.rampup = 10 * time.Second }},
		{"duration", func() { o.duration = 30 * time.Second }},
	}
	for _, d := range defaults {
		if !set[d.name] {
			d.apply()
		}
	}
}

// shape is one point's terminals, sessions and warehouses.
type shape struct{ terminals, sessions, warehouses int }

// shapes are the points the options ask for.
func (o options) shapes() []shape {
	var out []shape
	for _, n := range o.terminals {
		sh := shape{terminals: n, sessions: o.sessions, warehouses: o.warehouses}
		if sh.sessions == 0 {
			sh.sessions = max(1, n/perSession)
		}
		if sh.warehouses == 0 {
			sh.warehouses = max(1, n/perWarehouse)
		}
		out = append(out, sh)
	}
	return out
}

// Figures is what --json writes.
type Figures struct {
	harness.ServerFigures
	Quick  bool    `json:"quick"`
	Points []Point `json:"points"`
}

func run(ctx context.Context, o options) (err error) {
	scratch, dbrig, _, err := o.Setup(ctx, "terminals", "")
	if err != nil {
		return err
	}
	defer func() { err = scratch.Close(o.Keep, err) }()
	// 100 sessions, dbrig's telemetry and marks, the poll, the builds.
	urlFor, server, err := scratch.TunedServerWith(ctx, o.PgBin, o.Socket, map[string]string{"max_connections": "150"})
	if err != nil {
		return err
	}
	fig := &Figures{ServerFigures: server, Quick: o.quick}
	b := &bench{o: o, dbrig: dbrig, dir: scratch.Dir, srv: scratch.Server, urlFor: urlFor}
	for i, sh := range o.shapes() {
		p, err := b.point(ctx, sh, i+1, "")
		if err != nil {
			return err
		}
		fig.Points = append(fig.Points, p)
	}
	if o.pgbouncer {
		if p, ok := b.bouncerPoint(ctx, o.shapes()[0]); ok {
			fig.Points = append(fig.Points, p)
		}
	}
	fmt.Println()
	printTable(os.Stdout, fig)
	return harness.WriteFigures(o.JSON, fig)
}
