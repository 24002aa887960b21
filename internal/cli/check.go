package cli

import (
	"errors"
	"fmt"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

func newCheck() *cobra.Command {
	return workloadCommand("check", "Check a workload's consistency conditions", func(w workload.Workload, url *string) *cobra.Command {
		ch, ok := w.(workload.Checker)
		if !ok {
			return lacking(w, "no consistency check", "check")
		}
		return &cobra.Command{
			Short: "Run the " + w.Name() + " consistency conditions; exit 1 on any FAIL",
			Example: "  dbrig check " + w.Name() + "\n" +
				"  dbrig check " + w.Name() + " --target postgres://bench@localhost/bench",
			RunE: func(c *cobra.Command, _ []string) error {
				ctx, stop := signalContext(c.ErrOrStderr())
				defer stop()
				t, err := dbtarget.OpenExisting(ctx, *url)
				if err != nil {
					return err
				}
				defer t.Close()
				ok, err := ch.Check(ctx, t, c.OutOrStdout())
				if errors.Is(err, workload.ErrNoSchema) {
					return noSchema(w, t)
				}
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(c.OutOrStdout(), "Consistency check FAILED")
					return &failure{}
				}
				fmt.Fprintln(c.OutOrStdout(), "Consistency check passed")
				return nil
			},
		}
	})
}

func noSchema(w workload.Workload, t dbtarget.Target) error { return workload.NoSchema(w, t) }
