package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

// resultChecker is a Checker that can also check the answers a run kept
// in its document's extra section against the database, recomputed
// (`check --result FILE`); ok is false at the first that differs.
type resultChecker interface {
	CheckResult(ctx context.Context, t dbtarget.Target, extra map[string]any, out io.Writer) (bool, error)
}

func newCheck() *cobra.Command {
	return workloadCommand("check", "Check a workload's consistency conditions", func(w workload.Workload, url *string) *cobra.Command {
		ch, ok := w.(workload.Checker)
		if !ok {
			return lacking(w, "no consistency check", "check")
		}
		rc, answers := w.(resultChecker)
		var path string
		c := &cobra.Command{
			Short: "Run the " + w.Name() + " consistency conditions; exit 1 on any FAIL",
			Example: "  dbrig check " + w.Name() + "\n" +
				"  dbrig check " + w.Name() + " --target postgres://bench@localhost/bench",
			RunE: func(c *cobra.Command, _ []string) error {
				var doc *result.Document
				if path != "" {
					var err error
					if doc, err = readCheckedResult(path); err != nil {
						return err
					}
				}
				ctx, stop := signalContext(c.ErrOrStderr())
				defer stop()
				t, err := dbtarget.OpenExisting(ctx, *url)
				if err != nil {
					return err
				}
				defer t.Close()
				out := c.OutOrStdout()
				// The kept answers go first: a document that cannot be
				// checked is refused before anything prints.
				ok := true
				if doc != nil {
					ok, err = rc.CheckResult(ctx, t, doc.Extra, out)
				}
				if err == nil {
					var held bool
					held, err = ch.Check(ctx, t, out)
					ok = ok && held
				}
				if errors.Is(err, workload.ErrNoSchema) {
					return noSchema(w, t)
				}
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintln(out, "Consistency check FAILED")
					return &failure{}
				}
				fmt.Fprintln(out, "Consistency check passed")
				return nil
			},
		}
		if answers {
			c.Flags().StringVar(&path, "result", "", "also recompute on the target the answers this run's result document kept, and compare them")
			c.Example += "\n  dbrig check " + w.Name() + " --result dbrig-results/RUN.json"
		}
		return c
	})
}

// readCheckedResult reads the document of check --result.
func readCheckedResult(path string) (*result.Document, error) {
	doc, err := result.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, exitcode.Userf("no result document %s", path)
	}
	if err != nil {
		return nil, exitcode.Userf("%v", err)
	}
	return doc, nil
}

func noSchema(w workload.Workload, t dbtarget.Target) error { return workload.NoSchema(w, t) }
