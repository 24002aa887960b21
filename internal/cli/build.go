package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

func newBuild() *cobra.Command {
	return workloadCommand("build", "Create and load a workload's schema", func(w workload.Workload, url *string) *cobra.Command {
		b, ok := w.(workload.Builder)
		if !ok {
			return lacking(w, "no build: it runs on an empty database", "build")
		}
		var force bool
		c := &cobra.Command{
			Short: "Create and load the " + w.Name() + " schema",
			Example: "  dbrig build " + w.Name() + "\n" +
				"  dbrig build " + w.Name() + " --target postgres://bench@localhost/bench\n" +
				"  PGHOST=/var/run/postgresql PGDATABASE=bench dbrig build " + w.Name() + " --target 'sslmode=disable' --force",
			RunE: func(c *cobra.Command, _ []string) error {
				ctx, stop := signalContext(c.ErrOrStderr())
				defer stop()
				t, err := openCreating(ctx, *url)
				if err != nil {
					return err
				}
				defer t.Close()
				return build(ctx, w.Name(), b, t, force, c.OutOrStdout(), c.ErrOrStderr())
			},
		}
		b.BuildFlags(c.Flags())
		c.Flags().BoolVar(&force, "force", false, "drop an existing schema first")
		return c
	})
}

// build runs a workload's build with progress on stderr and the summary on stdout.
func build(ctx context.Context, name string, b workload.Builder, t dbtarget.Target, force bool, stdout, stderr io.Writer) error {
	p := newProgress(stderr)
	// The header waits for the first progress report: a build the workload
	// refuses up front (a bad flag, an existing schema) must print only its
	// one line of error.
	started := false
	sum, err := b.Build(ctx, t, workload.BuildOptions{Force: force, Progress: func(done, total int64, what string) {
		if !started {
			started = true
			fmt.Fprintf(stderr, "Building %s on %s\n", name, t.URL())
		}
		pct := 0.0
		if total > 0 {
			pct = float64(done) / float64(total) * 100
		}
		p.update(fmt.Sprintf("%-8s %5.1f%%  %d of %d rows", what, pct, done, total))
	}})
	p.done()
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.Userf("build interrupted; the partial schema was dropped")
		}
		return err
	}
	fmt.Fprintf(stdout, "Built %s: %d rows, %.0f MB in %.1f s (%.0f rows/s)\n",
		name, sum.Rows, float64(sum.Bytes)/1e6, sum.Seconds, float64(sum.Rows)/sum.Seconds)
	for _, n := range sum.Notes {
		fmt.Fprintln(stdout, n)
	}
	return nil
}

// openCreating opens url, creating its database where there is none. A
// target never makes a directory, lest a typing error in a path make
// some, but the default target's is dbrig's own, and made here.
func openCreating(ctx context.Context, url string) (dbtarget.Target, error) {
	if url == DefaultTarget {
		if err := os.MkdirAll(defaultDir, 0o755); err != nil {
			return nil, exitcode.Userf("target %s: %v", url, err)
		}
	}
	return dbtarget.Open(ctx, url)
}

// lacking is the subcommand of a workload that does not have what the
// command needs: one line saying so, and exit 2.
func lacking(w workload.Workload, has, command string) *cobra.Command {
	return &cobra.Command{
		Short: fmt.Sprintf("(%s has %s)", w.Name(), has),
		RunE: func(*cobra.Command, []string) error {
			return exitcode.Userf("%s has %s; there is nothing to %s", w.Name(), has, command)
		},
	}
}
