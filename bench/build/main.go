//go:build unix

// Command build benchmarks how dbrig's TPROC-C build scales with the
// warehouses, on a PostgreSQL server it starts itself (issue 39). For each
// warehouse count, in a database of its own, dropped before the next, it
// prints the build's wall time, rows and MB a second, dbrig's CPU, the
// server's CPU and dbrig's peak RSS, and the time a warehouse takes beside
// the smallest count's. The goals: the largest count's time a warehouse
// within 1.2x of the smallest's, and dbrig's peak RSS not growing with
// the warehouses (the rows stream; nothing is held per warehouse).
//
// It is a benchmark, not a test: it judges the figures against the goals
// but only fails when something does not work. bench/build.sh builds dbrig
// and runs it; see -help for the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/jackc/pgx/v5"
)

// The goals, as ratios within one run.
const (
	// targetPerWarehouse bounds the largest count's time a warehouse over
	// the smallest's.
	targetPerWarehouse = 1.2
	// targetRSS bounds the largest count's peak RSS over the smallest's:
	// a little more room than none, for the runtime's own growth.
	targetRSS = 1.25
)

type options struct {
	harness.Common
	warehouses []int
	loaders    int
}

// Figures is what --json writes.
type Figures struct {
	harness.ServerFigures
	Loaders int     `json:"loaders"`
	Builds  []Point `json:"builds"`
}

// Point is one build.
type Point struct {
	Warehouses int `json:"warehouses"`
	harness.BuildFigures
	// DatabaseBytes is the database's size once built.
	DatabaseBytes int64 `json:"database_bytes"`
}

func (p Point) perWarehouse() float64 { return p.Seconds / float64(p.Warehouses) }

func main() {
	o := options{warehouses: []int{4, 16, 48, 100}}
	fs := flag.CommandLine
	o.Flags(fs)
	fs.Func("warehouses", "comma-separated warehouse counts, one build each, smallest first (default 4,16,48,100)", func(s string) (err error) {
		o.warehouses, err = parseCounts(s)
		return err
	})
	fs.IntVar(&o.loaders, "loaders", 2, "parallel loaders of each build")
	flag.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: bench/build.sh [flags]\n\nExamples:\n  bench/build.sh                        # 4, 16, 48 and 100 warehouses: about 4 minutes, 12 GB of disk at most\n  bench/build.sh --warehouses 1,4 --json b.json\n\nFlags:\n")
		fs.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "build: unexpected argument %q; see -help\n", flag.Arg(0))
		os.Exit(2)
	}
	if o.loaders < 1 {
		fmt.Fprintln(os.Stderr, "build: --loaders must be at least 1")
		os.Exit(2)
	}
	harness.Main("build", func(ctx context.Context) error { return run(ctx, o) })
}

// parseCounts reads "4,16,48": positive, rising.
func parseCounts(s string) ([]int, error) {
	counts, err := harness.ParseCounts(s)
	if err == nil && (!slices.IsSorted(counts) || len(slices.Compact(slices.Clone(counts))) != len(counts)) {
		err = fmt.Errorf("%q: give the counts smallest first, each once", s)
	}
	return counts, err
}

func run(ctx context.Context, o options) (err error) {
	scratch, dbrig, _, err := o.Setup(ctx, "build", "")
	if err != nil {
		return err
	}
	defer func() { err = scratch.Close(o.Keep, err) }()
	urlFor, server, err := scratch.TunedServer(ctx, o.PgBin, o.Socket)
	if err != nil {
		return err
	}
	st, err := scratch.Server.Status(ctx)
	if err != nil {
		return err
	}
	serverCPU := func() (time.Duration, error) { return harness.TreeCPU(st.PID) }
	fig := &Figures{ServerFigures: server, Loaders: o.loaders}
	for _, wh := range o.warehouses {
		db := "wh" + strconv.Itoa(wh)
		if err := scratch.Server.CreateDB(ctx, db); err != nil {
			return err
		}
		url := urlFor(db)
		if err := harness.Checkpoint(ctx, url); err != nil {
			return err
		}
		fmt.Printf("\n== Build: %d warehouses, %d loaders\n", wh, o.loaders)
		b, err := harness.Build(ctx, dbrig, []string{"tproc-c", "--target", url,
			"--warehouses", strconv.Itoa(wh), "--loaders", strconv.Itoa(o.loaders)}, serverCPU)
		if err != nil {
			return err
		}
		p := Point{Warehouses: wh, BuildFigures: b}
		if p.DatabaseBytes, err = databaseBytes(ctx, url); err != nil {
			return err
		}
		fig.Builds = append(fig.Builds, p)
		// The next build gets the disk and the cache to itself.
		if err := scratch.Server.DropDB(ctx, db); err != nil {
			return err
		}
	}
	fmt.Println()
	printTable(os.Stdout, fig)
	return harness.WriteFigures(o.JSON, fig)
}

func databaseBytes(ctx context.Context, url string) (int64, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int64
	err = conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
	return n, err
}

// printTable prints each build, with its time a warehouse beside the
// first's, and judges the largest against the smallest.
func printTable(w io.Writer, f *Figures) {
	fmt.Fprintf(w, "== Figures: %d loaders, %s, %s\n", f.Loaders, f.Connection, human.FirstLine(f.ServerVersion))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "warehouses\twall s\ts a warehouse\tvs first\trows/s\tMB/s\tdbrig CPU s\tserver CPU s\tdbrig peak RSS MB\tdatabase GB\t")
	first := f.Builds[0]
	for _, p := range f.Builds {
		fmt.Fprintf(tw, "%d\t%.1f\t%.2f\t%.2f\t%s\t%.0f\t%.1f\t%.1f\t%.0f\t%.1f\t\n", p.Warehouses, p.Seconds, p.perWarehouse(),
			p.perWarehouse()/first.perWarehouse(), human.Thousands(float64(p.Rows)/p.Seconds), p.MB/p.Seconds,
			p.CPUSeconds, p.ServerCPUSeconds, float64(p.PeakRSS)/1e6, float64(p.DatabaseBytes)/1e9)
	}
	tw.Flush()
	fmt.Fprintln(w, harness.SettingsLine(f.Settings))
	if len(f.Builds) < 2 {
		return
	}
	last := f.Builds[len(f.Builds)-1]
	judge := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	perWH := last.perWarehouse() / first.perWarehouse()
	rss := float64(last.PeakRSS) / float64(first.PeakRSS)
	fmt.Fprintf(w, "time a warehouse, %d / %d: %.2f (goal ≤ %.1f): %s\n", last.Warehouses, first.Warehouses, perWH, targetPerWarehouse, judge(perWH <= targetPerWarehouse))
	fmt.Fprintf(w, "dbrig's peak RSS, %d / %d: %.2f (goal ≤ %.2f, no growth with the warehouses): %s\n", last.Warehouses, first.Warehouses, rss, targetRSS, judge(rss <= targetRSS))
}
