package cli

import (
	"fmt"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/parts"
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
				// The barrier of split runs is dbrig's too, and
				// every workload's: it goes with any drop.
				live, err := parts.Drop(ctx, t)
				if err != nil {
					return fmt.Errorf("drop the barrier of split runs (dbrig_part_runs, dbrig_part_members): %w", err)
				}
				if live != "" {
					fmt.Fprintf(c.OutOrStdout(), "Kept dbrig_part_runs and dbrig_part_members: the split run %q is under way on this database\n", live)
				}
				return nil
			},
		}
	})
}
