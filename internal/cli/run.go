package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/target"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

type runFlags struct {
	runner.Options
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
		fs.IntVar(&f.VUs, "vus", 4, "virtual users, each with its own connection")
		fs.DurationVar(&f.Rampup, "rampup", 10*time.Second, "time over which the virtual users start")
		fs.DurationVar(&f.Duration, "duration", 60*time.Second, "measured window")
		fs.StringVar(&f.jsonPath, "json", "", "write the result document here")
		fs.StringVar(&f.resultsDir, "results-dir", "dbrig-results", "where result documents go when --json is not given")
		fs.IntVar(&f.ClientCPUs, "client-cpus", 0, "CPUs the client may use at once (default: one per 8 VUs, at most all; GOMAXPROCS in the environment wins)")
		w.RunFlags(fs)
		return c
	})
}

func run(ctx context.Context, w workload.Workload, url string, f runFlags, stdout, stderr io.Writer) error {
	if err := f.Validate(); err != nil {
		return err
	}
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
	p := newProgress(stderr)
	fmt.Fprintf(stderr, "Running %s on %s: %d VUs, %s ramp-up, %s measured\n",
		w.Name(), t.URL(), f.VUs, f.Rampup, f.Duration)
	o := f.Options
	o.Progress = p.update
	o.Warn = func(msg string) { fmt.Fprintln(stderr, "dbrig: "+msg) }
	doc, err := runner.Run(ctx, t, w.Name(), r, o)
	p.done()
	if err != nil {
		return err
	}
	path := f.jsonPath
	if path == "" {
		path = result.DefaultPath(f.resultsDir, w.Name(), doc.StartedAt)
	}
	if err := result.Write(path, doc); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	report.Text(stdout, doc)
	fmt.Fprintf(stdout, "\nResult: %s\n", path)
	return nil
}
