package cli

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/spf13/cobra"
)

func newCompare() *cobra.Command {
	var htmlOut string
	c := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs or two sweeps side by side",
		Long: `Prints two result documents (or two sweep documents, point by point,
matched by their parameters) side by side, with B's % difference from A for
each metric. --html also writes the comparison as a self-contained page.`,
		Example: "  dbrig compare before.json after.json\n" +
			"  dbrig compare sweeps/pg15/sweep.json sweeps/pg18/sweep.json --html pg15-vs-18.html",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return exitcode.Userf("name two documents: dbrig compare A.json B.json [--html out.html]")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			a, err := loadDoc(args[0])
			if err != nil {
				return err
			}
			b, err := loadDoc(args[1])
			if err != nil {
				return err
			}
			if err := wholeRuns(a, b); err != nil {
				return err
			}
			cmp, err := report.Compare(a, b)
			if errors.Is(err, report.ErrMixedKinds) {
				return exitcode.Userf("%v", err)
			}
			if err != nil {
				return err
			}
			cmp.Text(human.SafeWriter(c.OutOrStdout()))
			if htmlOut != "" {
				var buf bytes.Buffer
				if err := report.CompareHTML(&buf, cmp); err != nil {
					return err
				}
				if err := writeFile(htmlOut, buf.Bytes()); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "\nReport: %s\n", htmlOut)
			}
			return nil
		},
	}
	c.Flags().StringVar(&htmlOut, "html", "", "also write the comparison as an HTML page here")
	return c
}

// wholeRuns refuses, in one line, a part of a split run: its figures are
// a share of the run's, which only its parts merged compare.
func wholeRuns(docs ...*report.Doc) error {
	for _, d := range docs {
		if d.Run != nil && d.Run.Part != nil {
			return exitcode.Userf("%s is part %d of %d of a split run: merge its parts first (dbrig merge)",
				d.Path, d.Run.Part.Index, d.Run.Part.Of)
		}
	}
	return nil
}
