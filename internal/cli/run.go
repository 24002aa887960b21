package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/target"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

type runFlags struct {
	clientCPUs int
	vus        int
	rampup     time.Duration
	duration   time.Duration
	jsonPath   string
	resultsDir string
}

func newRun() *cobra.Command {
	return workloadCommand("run", "Drive a workload with virtual users and record the result", func(w workload.Workload, url *string) *cobra.Command {
		var f runFlags
		c := &cobra.Command{
			Short: "Drive " + w.Name() + " with virtual users and record the result",
			Long: `Runs virtual users over a ramp-up, then measures a window of --duration.
Only the window counts. The result document goes to --json, or into
--results-dir with its path printed. Ctrl-C ends the window early and keeps
the result, marked interrupted.`,
			Example: "  dbrig run " + w.Name() + "\n" +
				"  dbrig run " + w.Name() + " --target postgres://bench@localhost/bench --vus 4 --duration 5m --json r.json\n" +
				"  dbrig run " + w.Name() + " --target postgres://bench@localhost/bench --mode sql --all-warehouses",
			RunE: func(c *cobra.Command, _ []string) error {
				ctx, stop := signalContext(c.ErrOrStderr())
				defer stop()
				return run(ctx, w, *url, f, c.OutOrStdout(), c.ErrOrStderr())
			},
		}
		fs := c.Flags()
		fs.IntVar(&f.vus, "vus", 4, "virtual users, each with its own connection")
		fs.DurationVar(&f.rampup, "rampup", 10*time.Second, "time over which the virtual users start")
		fs.DurationVar(&f.duration, "duration", 60*time.Second, "measured window")
		fs.StringVar(&f.jsonPath, "json", "", "write the result document here")
		fs.StringVar(&f.resultsDir, "results-dir", "dbrig-results", "where result documents go when --json is not given")
		fs.IntVar(&f.clientCPUs, "client-cpus", 0, "CPUs the client may use at once (default: one per 8 VUs, at most all; GOMAXPROCS in the environment wins)")
		w.RunFlags(fs)
		return c
	})
}

// clientProcs is how many Ps the Go runtime gets for a run. Virtual users
// mostly wait on the database, and every P beyond what they need adds idle
// threads that the runtime wakes and parks around each round trip: at 4
// VUs one P used a fifth less client CPU than two, in both modes, at the
// same throughput.
func clientProcs(f runFlags) int {
	if f.clientCPUs > 0 {
		return f.clientCPUs
	}
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	return min(runtime.NumCPU(), (f.vus+7)/8)
}

func (f runFlags) validate() error {
	switch {
	case f.clientCPUs < 0:
		return target.Userf("--client-cpus must not be negative, got %d", f.clientCPUs)
	case f.vus < 1:
		return target.Userf("--vus must be at least 1, got %d", f.vus)
	case f.duration <= 0:
		return target.Userf("--duration must be positive, got %s", f.duration)
	case f.rampup < 0:
		return target.Userf("--rampup must not be negative, got %s", f.rampup)
	}
	return nil
}

func run(ctx context.Context, w workload.Workload, url string, f runFlags, stdout, stderr io.Writer) error {
	if err := f.validate(); err != nil {
		return err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(clientProcs(f)))
	// Only the default target may be created here: it builds itself below.
	open := target.OpenExisting
	if url == DefaultTarget {
		open = target.Open
	}
	t, err := open(ctx, url)
	if err != nil {
		return err
	}
	defer t.Close()
	r, err := w.Open(ctx, t)
	if errors.Is(err, workload.ErrNoSchema) && url == DefaultTarget {
		// The zero-setup path: the embedded default builds its own schema.
		fmt.Fprintf(stderr, "No %s schema on the default target yet: building the smallest one first.\n", w.Name())
		if err = build(ctx, w, t, false, stderr, stderr); err == nil {
			r, err = w.Open(ctx, t)
		}
	}
	if errors.Is(err, workload.ErrNoSchema) {
		return noSchema(w, t)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	version, err := t.Version(ctx)
	if err != nil {
		return err
	}

	var marks [2]workload.Mark
	var markErr error
	started := time.Now()
	p := newProgress(stderr)
	fmt.Fprintf(stderr, "Running %s on %s (%s %s): %d VUs, %s ramp-up, %s measured\n",
		w.Name(), t.URL(), t.Kind(), version, f.vus, f.rampup, f.duration)
	res, err := driver.Run(ctx, r, driver.Config{
		VUs: f.vus, Rampup: f.rampup, Duration: f.duration, Keying: r.Config()["keying_thinking"] == true,
		Classify: t.Classify,
		WindowEdge: func(start bool) {
			i := 1
			if start {
				i = 0
			}
			// The marks are read even after Ctrl-C, which is what ends the window.
			m, err := r.Mark(context.WithoutCancel(ctx))
			m.At = time.Since(started).Seconds()
			marks[i] = m
			if err != nil && markErr == nil {
				markErr = err
			}
		},
		Progress: func(tk driver.Tick) {
			p.update(fmt.Sprintf("%-8s %4.0fs left  %s  VUs %d  errors %d",
				tk.Phase, tk.Left.Seconds(), r.Progress(tk.Counts), tk.VUs, tk.Errors))
		},
	})
	p.done()
	if err != nil {
		return err
	}
	if markErr != nil {
		fmt.Fprintf(stderr, "dbrig: database-side counters unavailable: %v\n", oneLine(markErr))
		marks = [2]workload.Mark{}
	}
	cfg := r.Config()
	cfg["vus"], cfg["rampup"], cfg["duration"] = f.vus, f.rampup.String(), f.duration.String()
	cfg["client_cpus"] = runtime.GOMAXPROCS(0)
	run := result.Run{
		Workload: w.Name(), Target: result.Target{Kind: t.Kind(), Version: version, URL: t.URL()},
		Config: cfg, Result: res, Summary: r.Summarize(res, marks[0], marks[1]),
		TxNames: r.TxNames(), TallyNames: r.TallyNames(),
	}
	if marks[1].Values != nil {
		run.Marks = marks[:]
	}
	doc, err := result.FromRun(run)
	if err != nil {
		return err
	}
	path := f.jsonPath
	if path == "" {
		path = result.DefaultPath(f.resultsDir, w.Name(), res.Started)
	}
	if err := result.Write(path, doc); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	report.Text(stdout, doc)
	fmt.Fprintf(stdout, "\nResult: %s\n", path)
	return nil
}
