package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/dbrig/dbrig/internal/atomicfile"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/spf13/cobra"
)

func newReport() *cobra.Command {
	var out string
	var text bool
	c := &cobra.Command{
		Use:   "report RESULT_OR_SWEEP",
		Short: "Write an HTML report of a run or a sweep",
		Long: `Writes one self-contained HTML page for a result document or a sweep
document: the configuration (Figure 1), the charts and the tables. The page
makes no network requests; it opens from disk. The report reads documents
only; it never re-runs anything. With --text it prints the same sections
(without the charts) instead.`,
		Example: "  dbrig report dbrig-results/tproc-c-20260101T120000Z.json\n" +
			"  dbrig report --text dbrig-results/tproc-c-20260101T120000Z.json | less\n" +
			"  dbrig report sweeps/buffer-cache/sweep.json -o buffer-cache.html",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitcode.Userf("name one result or sweep document: dbrig report FILE.json [-o report.html]")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			d, err := loadDoc(args[0])
			if err != nil {
				return err
			}
			if text {
				// A document is anyone's text: nothing in it reaches the
				// terminal as a control sequence.
				report.PlainText(human.SafeWriter(c.OutOrStdout()), d)
				return nil
			}
			if out == "" {
				out = strings.TrimSuffix(args[0], filepath.Ext(args[0])) + ".html"
			}
			var buf bytes.Buffer
			if err := report.HTML(&buf, d); err != nil {
				return err
			}
			if err := writeFile(out, buf.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Report: %s\n", out)
			return nil
		},
	}
	c.Flags().BoolVar(&text, "text", false, "print the report as text instead of writing HTML")
	c.Flags().StringVarP(&out, "output", "o", "", "where to write the page (default: next to the input, with .html)")
	return c
}

// loadDoc reads a run or sweep document; what the user can fix (a wrong
// path, a file that is not a document) is one line and exit 2.
func loadDoc(path string) (*report.Doc, error) {
	d, err := report.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, exitcode.Userf("%s: no such file; name a result document (dbrig run --json) or a sweep document", path)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, exitcode.Userf("cannot read %s: %v", path, pe.Err)
		}
		return nil, exitcode.Userf("%s", human.OneLine(err))
	}
	return d, nil
}

func writeFile(path string, b []byte) error {
	if err := atomicfile.Write(path, b, 0o644); err != nil {
		return exitcode.Userf("cannot write %s: %v", path, unwrapPath(err))
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
