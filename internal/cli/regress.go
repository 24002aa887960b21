package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/spf13/cobra"
)

func newRegress() *cobra.Command {
	var cat catalogFlags
	var ff filterFlags
	var out outFormat
	var metric, baseline, run string
	var k int
	var alpha float64
	c := &cobra.Command{
		Use:   "regress --metric KEY [filter]",
		Short: "Test the newest run against a baseline; exit 1 on a regression",
		Long: `Tests the newest catalogued run the filter picks (or --run ID) against a
baseline: the runs just before it (--baseline last:N, the default last:5),
the first of the series (first:N) or runs named by ID. With --new K the
tested run and the K-1 before it are repetitions of one setup, and the test
is Welch's t on the two sets; one run against several is tested against
the baseline's run-to-run spread; one against one by their own intervals.
A change significant at --alpha in the metric's worse direction is a
regression, and the exit code is 1; no change, or an improvement, is 0;
a filter, a metric or a baseline that cannot be tested is 2. The change
points of the whole series follow, as dbrig history prints them.

Keep the filter to one setup: runs that differ in what they measure make
a baseline that means nothing.`,
		Example: "  dbrig regress --metric nopm --workload tproc-c --where config.vus=8\n" +
			"  dbrig regress --metric nopm --tag nightly --baseline first:10 --new 3\n" +
			"  dbrig regress --metric tpm --run 3f2a9c1b --baseline 9c01d2e4,77ab01f3 --markdown   # a pull request's comment",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if metric == "" {
				return exitcode.Userf("name the metric to test: dbrig regress --metric nopm (dbrig runs show ID lists a run's)")
			}
			if alpha <= 0 || alpha >= 0.5 {
				return exitcode.Userf("--alpha %g: want a significance level between 0 and 0.5, such as 0.05", alpha)
			}
			b, err := catalog.ParseBaseline(baseline)
			if err != nil {
				return err
			}
			cg, f, err := cat.openFiltered(c.Context(), &ff)
			if err != nil {
				return err
			}
			defer cg.Close()
			chk, err := cg.CheckRun(c.Context(), metric, f, run, k, b, alpha)
			if err != nil {
				return err
			}
			if err := printCheck(c.OutOrStdout(), chk, b, &out); err != nil {
				return err
			}
			if chk.Test.Verdict == catalog.Regression {
				return &failure{}
			}
			return nil
		},
	}
	addCatalogFlag(c.Flags(), &cat)
	ff.add(c.Flags(), 0)
	out.add(c.Flags())
	c.Flags().StringVar(&metric, "metric", "", "the metric to test (nopm, tpm, ...)")
	c.Flags().StringVar(&baseline, "baseline", catalog.DefaultBaseline.String(), "what the run is tested against: last:N, first:N or run IDs separated by commas")
	c.Flags().StringVar(&run, "run", "", "test this run rather than the newest")
	c.Flags().IntVar(&k, "new", 1, "the tested run and the runs just before it, this many in all, are repetitions of one setup")
	c.Flags().Float64Var(&alpha, "alpha", 0.05, "the significance level of the test")
	return c
}

func printCheck(w io.Writer, chk *catalog.Check, b catalog.Baseline, out *outFormat) error {
	t := chk.Test
	m := chk.Metric
	tested := t.New[len(t.New)-1]
	tb := &table{head: []string{"", "RUNS", strings.ToUpper(m.Label), "CHANGE", "95% INTERVAL", "P", "VERDICT"}}
	tb.add("tested", ids(t.New), num(t.NewMean), fmt.Sprintf("%+.2f%%", t.Change*100),
		fmt.Sprintf("[%+.2f%%, %+.2f%%]", t.Low*100, t.High*100), fmt.Sprintf("%.4f", t.P), t.Verdict)
	tb.add("baseline "+b.String(), ids(t.Base), num(t.BaseMean), "", "", "", "")
	if err := out.print(w, tb, chk); err != nil || out.json || out.csv {
		return err
	}
	fmt.Fprintf(w, "\n%s of run %s (%s) against %s: %s (%s).\n", m.Label, catalog.ShortID(tested.ID),
		stamp(tested.StartedAt, "2006-01-02 15:04"), b, t.Verdict, t.Method)
	s := chk.Series
	switch {
	case len(s.Samples) < catalog.MinChangeRuns:
		fmt.Fprintf(w, "The series has %s, too few to look for a change point (%d at least).\n", human.Count(len(s.Samples), "run"), catalog.MinChangeRuns)
	case len(s.Changes) == 0:
		fmt.Fprintf(w, "No change point in the series' %d runs.\n", len(s.Samples))
	}
	for _, c := range s.Changes {
		fmt.Fprintf(w, "Change point at run %s (%s, the %s of %d): %s\n", catalog.ShortID(c.ID), stamp(c.StartedAt, "2006-01-02 15:04"), ordinal(c.Index+1), len(s.Samples), changeLine(c))
	}
	return nil
}

// ids are the samples' short IDs, the first and last of many.
func ids(s []catalog.Sample) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return catalog.ShortID(s[0].ID)
	case 2:
		return catalog.ShortID(s[0].ID) + ", " + catalog.ShortID(s[1].ID)
	}
	return fmt.Sprintf("%s … %s (%d)", catalog.ShortID(s[0].ID), catalog.ShortID(s[len(s)-1].ID), len(s))
}
