package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/spf13/cobra"
)

func newCompare() *cobra.Command {
	var htmlOut string
	var cat catalogFlags
	var out outFormat
	c := &cobra.Command{
		Use:   "compare A B [C...]",
		Short: "Compare runs or sweeps side by side",
		Long: `Prints two result documents (or two sweep documents, point by point,
matched by their parameters) side by side, with B's % difference from A for
each metric. --html also writes the comparison as a self-contained page.
Each of A, B, ... is a document's path or the ID of a catalogued one (dbrig
runs lists them). More than two runs are put side by side as the catalogue
keeps them: every metric and the telemetry that explains it, with each
one's change from the first, and the config keys whose values differ.`,
		Example: "  dbrig compare before.json after.json\n" +
			"  dbrig compare sweeps/pg15/sweep.json sweeps/pg18/sweep.json --html pg15-vs-18.html\n" +
			"  dbrig compare 3f2a9c1b 9c01d2e4 77ab01f3 --markdown   # three catalogued runs",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return exitcode.Userf("name two documents or more: dbrig compare A.json B.json [--html out.html], or catalogued runs by ID")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			docs, err := compared(c.Context(), &cat, args)
			if err != nil {
				return err
			}
			if len(docs) > 2 {
				if htmlOut != "" {
					return exitcode.Userf("--html compares two documents; for more, dbrig serve puts them side by side")
				}
				return compareMany(c.OutOrStdout(), docs, &out)
			}
			a, b := docs[0].doc, docs[1].doc
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
	addCatalogFlag(c.Flags(), &cat)
	out.add(c.Flags())
	return c
}

// comparedDoc is one of compare's arguments, read.
type comparedDoc struct {
	doc   *report.Doc
	entry *catalog.Entry
}

// compared reads compare's arguments: a path where there is such a file,
// else a catalogued run's ID.
func compared(ctx context.Context, cat *catalogFlags, args []string) ([]comparedDoc, error) {
	var cg *catalog.Catalog
	defer func() {
		if cg != nil {
			cg.Close()
		}
	}()
	var out []comparedDoc
	for _, a := range args {
		b, err := result.ReadFile(a)
		path := a
		if errors.Is(err, fs.ErrNotExist) && isID(a) {
			if cg == nil {
				if cg, err = cat.open(ctx); err != nil {
					return nil, err
				}
			}
			var e *catalog.Entry
			if e, err = cg.Get(ctx, a); err != nil {
				return nil, err
			}
			if b, err = cg.Document(ctx, e.ID); err != nil {
				return nil, err
			}
			path = e.Path
		}
		if err != nil {
			_, err := loadDoc(a) // its refusal, in the words report and compare share
			return nil, err
		}
		d, err := report.Parse(path, b)
		if err != nil {
			return nil, exitcode.Userf("%s", human.OneLine(err))
		}
		e, err := catalog.Index(path, b)
		if err != nil {
			return nil, exitcode.Userf("%s", human.OneLine(err))
		}
		out = append(out, comparedDoc{doc: d, entry: e})
	}
	return out, nil
}

// isID tells whether s may be a catalogued run's ID, or a start of one.
func isID(s string) bool {
	return len(s) >= 4 && strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

// compareMany prints three or more runs side by side.
func compareMany(w io.Writer, docs []comparedDoc, out *outFormat) error {
	var es []*catalog.Entry
	head := []string{""}
	for _, d := range docs {
		es = append(es, d.entry)
		head = append(head, catalog.ShortID(d.entry.ID)+" "+stamp(d.entry.StartedAt, "2006-01-02 15:04"))
	}
	cmp := catalog.Compare(es)
	t := &table{head: head}
	for _, r := range append(cmp.Metrics, cmp.Telemetry...) {
		row := []string{r.Label}
		for i, v := range r.Values {
			cell := "—"
			if v != nil {
				cell = num(*v)
				if i > 0 && r.Change[i] != nil {
					cell += fmt.Sprintf(" (%+.1f%%)", *r.Change[i]*100)
				}
			}
			row = append(row, cell)
		}
		t.add(row...)
	}
	for _, r := range cmp.Config {
		t.add(append([]string{"config " + r.Key}, r.Values...)...)
	}
	return out.print(w, t, cmp)
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
