package cli

import (
	"fmt"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

func newDrop() *cobra.Command {
	return workloadCommand("drop", "Drop a workload's schema", func(w workload.Workload, url *string) *cobra.Command {
		d, ok := w.(workload.Dropper)
		if !ok {
			return lacking(w, "no schema", "drop")
		}
		return &cobra.Command{
			Short:   "Drop the " + w.Name() + " schema",
			Example: "  dbrig drop " + w.Name() + " --target postgres://bench@localhost/bench",
			RunE: func(c *cobra.Command, _ []string) error {
				ctx, stop := signalContext(c.ErrOrStderr())
				defer stop()
				t, err := dbtarget.OpenExisting(ctx, *url)
				if err != nil {
					return err
				}
				defer t.Close()
				if err := d.Drop(ctx, t); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "Dropped the %s schema on %s\n", w.Name(), t.URL())
				return nil
			},
		}
	})
}
