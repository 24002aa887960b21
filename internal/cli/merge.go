package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

func newMerge() *cobra.Command {
	var out, dir string
	var allowMissing bool
	var cat catalogFlags
	c := &cobra.Command{
		Use:   "merge PART.json...",
		Short: "Merge the documents of a run's parts into one",
		Long: `Merges the documents that the parts of one run (run --part I/N) wrote into
one document of the whole run: the latency histograms merged exactly, the
counters summed, the series summed second by second, and the database's
side from the part that read it. Report, compare and sweeps read it like
any other run.

Documents of different runs are refused, naming what differs, and so are a
part given twice and a missing one: a part that died is named, and the
merge goes on without it only with --allow-missing, which its summary then
says. A part's document is checked against itself too: its configuration
must still hash to what the parts agreed on, its counts must be its
histograms' and never negative, its VUs its share of the run's, and only
one part may hold the database's marks; an edited part is refused in one
line naming it and the field.`,
		Example: "  dbrig merge results/part-*.json --json all.json\n" +
			"  dbrig merge p1.json p2.json p3.json --allow-missing --json all.json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exitcode.Userf("name the parts' documents: dbrig merge PART.json... --json ALL.json")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := cat.check(c.Context()); err != nil {
				return err
			}
			written, err := merge(args, out, dir, allowMissing, c.OutOrStdout())
			if err != nil {
				return err
			}
			cat.record(c.Context(), c.OutOrStdout(), c.ErrOrStderr(), written)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&out, "json", "", "write the merged document here (default: in --results-dir, named by workload and start)")
	fs.StringVar(&dir, "results-dir", "dbrig-results", "where the merged document goes when --json is not given")
	fs.BoolVar(&allowMissing, "allow-missing", false, "merge the parts present when some are missing (a part that died), and say so in the summary")
	addRecordFlags(fs, &cat)
	return c
}

// merge reads the parts' documents, merges them with their workload's
// summary, writes the run's document, prints its summary and says where
// it went.
func merge(paths []string, out, dir string, allowMissing bool, stdout io.Writer) (string, error) {
	docs := make([]*result.Document, len(paths))
	for i, p := range paths {
		d, err := result.Read(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", exitcode.Userf("%s: no such file; name the documents the parts wrote (run --part I/N --json)", p)
		case err != nil:
			return "", exitcode.Userf("%s", human.OneLine(err))
		}
		docs[i] = d
	}
	w, ok := workload.New(docs[0].Workload)
	if !ok {
		return "", exitcode.Userf("%s: workload %q is not one this dbrig knows", paths[0], docs[0].Workload)
	}
	rs, ok := w.(workload.Resummarizer)
	if !ok {
		return "", exitcode.Userf("%s: dbrig cannot merge %s's parts", paths[0], w.Name())
	}
	d, err := result.Merge(docs, paths, result.MergeOptions{AllowMissing: allowMissing, Summarize: rs.Resummarize, Info: w.Info()})
	if err != nil {
		return "", err
	}
	if out == "" {
		out = result.DefaultPath(dir, d.Workload, d.StartedAt)
	}
	if err := result.Write(out, d); err != nil {
		return "", exitcode.Userf("cannot write %s: %v", out, unwrapPath(err))
	}
	report.Text(stdout, d)
	fmt.Fprintf(stdout, "\nResult: %s\n", out)
	return out, nil
}
