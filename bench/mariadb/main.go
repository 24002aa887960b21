//go:build unix

// Command mariadb measures tproc-c's two modes on MariaDB in one run: a
// server of its own, one build, then runs of procs and sql mode in turns,
// each pair in the other order from the last, so that a machine that
// drifts weighs on both alike. It prints each run's NOPM and the CPU per
// transaction of the client (the dbrig process) and of the server (the
// mariadbd process, around the run), the ratios sql / procs of each pair
// and their medians, judged against the target; then dbrig check tproc-c
// checks the database's consistency after all the runs.
//
// It is a benchmark, not a test: it judges the figures, but only fails
// when something does not work. bench/mariadb.sh builds dbrig and runs it;
// see -help for the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/server/mariadb"
)

// targetSQLNOPM is sql-mode NOPM / procs mode's, at least (issue 24).
const targetSQLNOPM = 0.5

type options struct {
	dbrig, bin, dir, json, bufferPool string
	pairs, vus, warehouses            int
	duration                          time.Duration
	keep                              bool
}

// Figures is what --json writes.
type Figures struct {
	StartedAt     time.Time `json:"started_at"`
	ServerVersion string    `json:"server_version"`
	Warehouses    int       `json:"warehouses"`
	Runs          []Run     `json:"runs"`
	// MedianNOPMRatio is the median over the pairs of sql / procs NOPM.
	MedianNOPMRatio float64 `json:"median_nopm_ratio"`
	CheckPassed     bool    `json:"check_passed"`
}

func main() {
	var o options
	fs := flag.NewFlagSet("mariadb", flag.ExitOnError)
	fs.StringVar(&o.dbrig, "dbrig", "", "dbrig binary to measure (default: go build ./cmd/dbrig into the temp dir)")
	fs.StringVar(&o.bin, "mariadb-bin", "", "directory of mariadbd (default: $MARIADB_BIN, then the usual places)")
	fs.StringVar(&o.dir, "dir", "", "where the temp dir for the server goes (default: $TMPDIR or /tmp)")
	fs.StringVar(&o.json, "json", "", "also write the figures as JSON to this file")
	fs.StringVar(&o.bufferPool, "buffer-pool", "1G", "innodb_buffer_pool_size")
	fs.IntVar(&o.pairs, "pairs", 3, "pairs of runs, one of each mode")
	fs.IntVar(&o.vus, "vus", 4, "virtual users of each run")
	fs.IntVar(&o.warehouses, "warehouses", 2, "warehouses built")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "measured window of each run (no ramp-up: the CPU figures cover the whole process)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp dir (server stopped) for inspection")
	fs.Parse(os.Args[1:])
	if fs.NArg() > 0 || o.pairs < 1 || o.vus < 1 || o.warehouses < 1 || o.duration < time.Second {
		fmt.Fprintln(os.Stderr, "mariadb: give --pairs, --vus and --warehouses of at least 1, --duration of at least 1s, and no arguments")
		os.Exit(2)
	}
	harness.Main("mariadb", func(ctx context.Context) error { return run(ctx, o) })
}

func run(ctx context.Context, o options) (err error) {
	scratch, err := harness.NewScratch("mariadb", o.dir)
	if err != nil {
		return err
	}
	defer func() { err = scratch.Close(o.keep, err) }()
	dbrig, err := scratch.Dbrig(ctx, o.dbrig, "")
	if err != nil {
		return err
	}
	srv := mariadb.New(filepath.Join(scratch.Dir, "maria"), o.bin)
	if err := srv.Init(ctx); err != nil {
		return err
	}
	if err := srv.Start(ctx, map[string]string{"innodb_buffer_pool_size": o.bufferPool}); err != nil {
		return err
	}
	defer func() {
		stop, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if serr := srv.Stop(stop); err == nil {
			err = serr
		}
	}()
	fig := Figures{StartedAt: time.Now().UTC(), Warehouses: o.warehouses}
	if fig.ServerVersion, err = srv.Version(ctx); err != nil {
		return err
	}
	if err := srv.CreateDB(ctx, "bench"); err != nil {
		return err
	}
	url := srv.URLFor("bench")
	fmt.Printf("MariaDB %s in %s, innodb_buffer_pool_size=%s, durable defaults\n", fig.ServerVersion, srv.Dir, o.bufferPool)
	if _, _, err := harness.Timed(ctx, harness.Command(ctx, dbrig, "build", "tproc-c", "--warehouses", strconv.Itoa(o.warehouses), "--target", url)); err != nil {
		return err
	}
	pid, err := serverPID(srv)
	if err != nil {
		return err
	}
	for pair := 1; pair <= o.pairs; pair++ {
		modes := []string{"procs", "sql"}
		if pair%2 == 0 {
			slices.Reverse(modes)
		}
		for _, mode := range modes {
			r, err := runOnce(ctx, dbrig, url, pid, filepath.Join(scratch.Dir, fmt.Sprintf("%d-%s.json", pair, mode)), mode, o)
			if err != nil {
				return err
			}
			r.Pair = pair
			fig.Runs = append(fig.Runs, r)
		}
	}
	fmt.Println("\n== dbrig check tproc-c, after all the runs")
	fig.CheckPassed = harness.Command(ctx, dbrig, "check", "tproc-c", "--target", url).Run() == nil
	fig.MedianNOPMRatio = printFigures(os.Stdout, fig)
	if !fig.CheckPassed {
		return fmt.Errorf("the consistency check failed after the runs")
	}
	return harness.WriteFigures(o.json, fig)
}

// serverPID is mariadbd's process id, from its pid file.
func serverPID(srv *mariadb.Server) (int, error) {
	b, err := os.ReadFile(filepath.Join(srv.DataDir(), "mariadbd.pid"))
	if err != nil {
		return 0, fmt.Errorf("the server's pid: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
