//go:build unix

// Command hammerdb measures dbrig's TPROC-C beside HammerDB 4.12's TPC-C
// on PostgreSQL, each on a cluster of its own with the same settings, in
// pairs of runs that alternate which tool goes first: NOPM, and the
// server's CPU per New-Order over each run's measured window, with the
// bootstrap intervals of their ratios' medians; WAL bytes and blocks
// dirtied per New-Order over each whole run. Every run starts from a copy
// of its tool's database made after the build.
//
// HammerDB is GPL and is never copied into dbrig: it is assembled outside
// the repository (bench/hammerdb-setup.sh DIR) and given with --hammerdb
// DIR. The scripts that drive it are written here, from the dbset, diset
// and vuset commands its documentation lists. bench/hammerdb.sh builds
// dbrig from the checkout and runs this; see -help for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
)

// Targets, as medians over the pairs of dbrig/HammerDB ratios.
const (
	targetNOPM = 1.25 // NOPM, at least
	targetCPU  = 0.85 // server CPU per New-Order, at most
)

// The run's shape, as the harness doc sets it: 4 warehouses, 4 virtual
// users, a minute of ramp-up.
const (
	warehouses = 4
	vus        = 4
	rampup     = time.Minute
)

// harnessDoc says how HammerDB 4.12 was assembled on this machine kind.
const harnessDoc = "/work/shared/research/hammerdb-harness.md"

type options struct {
	harness.Common
	hammerdb string
	pairs    int
	duration time.Duration
	// warmup is an unmeasured run of each tool before the pairs (0 for
	// none), so that no pair's first run pays for cold caches and the
	// first autoanalyze of the tables after the build.
	warmup time.Duration
	// hammerdbFirst starts pair 1 with HammerDB, so that pairs run as
	// separate commands can still alternate.
	hammerdbFirst bool
}

func main() {
	o, msg := parse(os.Args[1:], os.Stderr)
	if msg == "" {
		msg = checkHammerDB(o.hammerdb)
	}
	if msg != "" {
		fmt.Fprintln(os.Stderr, "hammerdb: "+msg)
		os.Exit(2)
	}
	harness.Main("hammerdb", func(ctx context.Context) error { return run(ctx, o) })
}

// parse reads the flags; a non-empty message is a usage error, for one
// line and exit code 2.
func parse(args []string, errOut io.Writer) (options, string) {
	var o options
	fs := flag.NewFlagSet("hammerdb", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&o.hammerdb, "hammerdb", "", "HammerDB 4.12 assembled by bench/hammerdb-setup.sh (required)")
	fs.IntVar(&o.pairs, "pairs", 5, "pairs of runs, one of each tool, alternating which goes first; the medians' bootstrap intervals are coarse below 5")
	fs.DurationVar(&o.duration, "duration", time.Minute, "measured window of each run, in whole minutes (HammerDB counts minutes)")
	fs.DurationVar(&o.warmup, "warmup", time.Minute, "an unmeasured run of each tool before the pairs, in whole minutes; 0 for none")
	fs.BoolVar(&o.hammerdbFirst, "hammerdb-first", false, "start pair 1 with HammerDB (to alternate across separate commands)")
	o.Flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		return o, err.Error()
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Sprintf("unexpected argument %q; see -help", fs.Arg(0))
	case o.Socket:
		return o, "--socket: HammerDB connects over TCP loopback, so dbrig does too here"
	case o.pairs < 1:
		return o, "--pairs must be at least 1"
	case o.duration < time.Minute || o.duration%time.Minute != 0:
		return o, fmt.Sprintf("--duration %s: give whole minutes (HammerDB's pg_duration counts minutes)", o.duration)
	case o.warmup < 0 || o.warmup%time.Minute != 0:
		return o, fmt.Sprintf("--warmup %s: give whole minutes, or 0 for none", o.warmup)
	}
	return o, ""
}

// checkHammerDB says what is wrong with dir as HammerDB 4.12 set up by
// bench/hammerdb-setup.sh, "" when nothing is.
func checkHammerDB(dir string) string {
	how := fmt.Sprintf("build it as %s says (bench/hammerdb-setup.sh DIR does its steps) and pass --hammerdb DIR; nothing of HammerDB is copied into dbrig", harnessDoc)
	if dir == "" {
		return "HammerDB 4.12 not given: " + how
	}
	cli, err := os.ReadFile(filepath.Join(dir, "hammerdbcli"))
	switch {
	case err != nil:
		return fmt.Sprintf("no HammerDB in %s (%v): %s", dir, err, how)
	case !strings.Contains(string(cli), `set hdb_version "v4.12"`):
		return fmt.Sprintf("%s is not HammerDB 4.12: %s", dir, how)
	case !strings.Contains(string(cli), "exec tclsh8.6 "):
		return fmt.Sprintf("%s/hammerdbcli still runs its bundled ./bin/tclsh8.6: %s", dir, how)
	}
	cmd := exec.Command("tclsh8.6")
	cmd.Env = append(os.Environ(), "TCLLIBPATH="+filepath.Join(dir, "lib"))
	cmd.Stdin = strings.NewReader("package require Pgtcl\npackage require Thread\npackage require ticklecharts\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Sprintf("Pgtcl, Thread or the ticklecharts stub does not load in %s (%s): %s", dir, firstLine(string(out), err), how)
	}
	return ""
}

// firstLine is the first line of a command's output, or its error.
func firstLine(out string, err error) string {
	if line, _, _ := strings.Cut(strings.TrimSpace(out), "\n"); line != "" {
		return line
	}
	return err.Error()
}

func run(ctx context.Context, o options) (err error) {
	scratch, dbrig, _, err := o.Setup(ctx, "hammerdb", "")
	if err != nil {
		return err
	}
	defer func() { err = scratch.Close(o.Keep, err) }()
	other, err := harness.NewScratch("hammerdb", o.BaseDir)
	if err != nil {
		return err
	}
	defer func() { err = other.Close(o.Keep, err) }()

	fmt.Println("== dbrig's server")
	d, err := startSide(ctx, scratch, o, "dbrig")
	if err != nil {
		return err
	}
	fmt.Println("\n== HammerDB's server")
	h, err := startSide(ctx, other, o, "HammerDB")
	if err != nil {
		return err
	}
	fig := &Figures{ServerFigures: d.server, Warehouses: warehouses, VUs: vus,
		Rampup: rampup.String(), Duration: o.duration.String()}

	fmt.Printf("\n== Builds: %d warehouses each\n", warehouses)
	if err := d.buildDbrig(ctx, dbrig); err != nil {
		return err
	}
	if err := h.buildHammerDB(ctx, o.hammerdb); err != nil {
		return err
	}
	for _, s := range []*side{d, h} {
		if err := s.keep(ctx); err != nil {
			return err
		}
	}
	if o.warmup > 0 {
		fig.Warmup = o.warmup.String()
		// Pair 0 is the warm-up: run, printed, not counted.
		for _, s := range []*side{d, h} {
			if _, err := s.run(ctx, 0, dbrig, o.warmup, o.hammerdb); err != nil {
				return err
			}
		}
	}
	for pair := 1; pair <= o.pairs; pair++ {
		order := []*side{d, h}
		if (pair%2 == 0) != o.hammerdbFirst {
			order = []*side{h, d}
		}
		p := Pair{N: pair, First: order[0].tool}
		for _, s := range order {
			r, err := s.run(ctx, pair, dbrig, o.duration, o.hammerdb)
			if err != nil {
				return err
			}
			if s == d {
				p.Dbrig = r
			} else {
				p.HammerDB = r
			}
		}
		p.ratios()
		fig.Pairs = append(fig.Pairs, p)
		printPair(os.Stdout, p)
	}
	fig.summarize()
	printSummary(os.Stdout, fig)
	return harness.WriteFigures(o.JSON, fig)
}
