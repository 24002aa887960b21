package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

func newAudit() *cobra.Command {
	c := &cobra.Command{
		Use:   "audit",
		Short: "Audit what a run left in the database",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return exitcode.Userf("name what to audit: dbrig audit durability RESULT")
		},
	}
	c.AddCommand(newAuditDurability())
	return c
}

func newAuditDurability() *cobra.Command {
	var url string
	c := &cobra.Command{
		Use:   "durability RESULT",
		Short: "Look up again every change a run's database acknowledged; exit 1 if any is missing",
		Long: `A run with --audit-durability logs every change the database acknowledged
as committed (tproc-c: every New-Order, as w, d, o_id) in a file beside its
result, RESULT with .acks for .json. This looks each of them up again on the
target, then runs the workload's consistency check, and prints what it found:
how many were acknowledged, how many are missing (named), and how many were
in doubt (the commit was sent, the answer never came), which are not counted
as lost. The exit code is 1 when any is missing or the check fails.

The target is the one the result names, unless --target gives another: a
result never holds a password, so a URL that needs one must be given again.` + targetLong,
		Example: `  dbrig audit durability dbrig-results/tproc-c-20261122T120000Z.json
  dbrig audit durability r.json --target postgres://bench@localhost/bench`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			doc, err := result.Read(args[0])
			if errors.Is(err, fs.ErrNotExist) {
				return exitcode.Userf("no result document %s", args[0])
			}
			if err != nil {
				return exitcode.Userf("%v", err)
			}
			// A run whose own audit failed has its log but no finding.
			log := runner.AckLogPath(args[0])
			if doc.Durability != nil {
				log = filepath.Join(filepath.Dir(args[0]), doc.Durability.Log)
			}
			if _, err := os.Stat(log); err != nil {
				return exitcode.Userf("%s has no acknowledgement log %s: run the workload with --audit-durability", args[0], log)
			}
			w, ok := workload.New(doc.Workload)
			if !ok {
				return exitcode.Userf("%s is a run of %q, which this dbrig does not know", args[0], doc.Workload)
			}
			if url == "" {
				url = doc.Target.URL
			}
			ctx, stop := signalContext(c.ErrOrStderr())
			defer stop()
			t, err := dbtarget.OpenExisting(ctx, url)
			if err != nil {
				return err
			}
			defer t.Close()
			d, err := runner.AuditDurability(ctx, w, t, log, c.ErrOrStderr())
			if err != nil {
				return err
			}
			report.Durability(c.OutOrStdout(), d)
			return durabilityVerdict(d)
		},
	}
	c.Flags().StringVar(&url, "target", "", "the target to look on (default: the one the result names)")
	return c
}

// durabilityVerdict fails a command whose audit found a change missing or
// the data inconsistent; the report has said so.
func durabilityVerdict(d *result.Durability) error {
	if d.Missing > 0 || d.Consistent != nil && !*d.Consistent {
		return &failure{}
	}
	return nil
}
