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

func newHistory() *cobra.Command {
	var cat catalogFlags
	var ff filterFlags
	var out outFormat
	var by string
	c := &cobra.Command{
		Use:   "history METRIC",
		Short: "A metric over time, each run with its interval, and where it changed",
		Long: `Prints a metric's value in every catalogued run the filter picks, the
oldest first, with the 95% interval each run's own throughput gives it (the
method of batch means over its measured window), then the change points:
the runs at which the series moved to a new level, found by E-divisive
means with a permutation test (the method MongoDB runs over its
performance tests), each with the size of the change and its p-value.

Keep a history to one setup (--workload, --target, --where config.KEY=V),
or split it by a config key (--by vus): each value is a series of its own,
with its own change points. METRIC is a key of the workload's metrics
(nopm, tpm, orders_per_minute, ...); dbrig runs show ID lists a run's.`,
		Example: "  dbrig history nopm --workload tproc-c --where config.vus=8\n" +
			"  dbrig history nopm --workload tproc-c --by vus --since 30d\n" +
			"  dbrig history tpm --target postgres:15 --tag nightly --markdown",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exitcode.Userf("name the metric: dbrig history METRIC (nopm, tpm, ...)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			cg, f, err := cat.openFiltered(c.Context(), &ff)
			if err != nil {
				return err
			}
			defer cg.Close()
			h, err := cg.TrendOf(c.Context(), args[0], f, by)
			if err != nil {
				return err
			}
			return printTrend(c.OutOrStdout(), h, &out)
		},
	}
	addCatalogFlag(c.Flags(), &cat)
	ff.add(c.Flags(), 0)
	out.add(c.Flags())
	c.Flags().StringVar(&by, "by", "", "split the history by this config key (vus, warehouses, ...): a series and its change points per value")
	return c
}

func printTrend(w io.Writer, h *catalog.Trend, out *outFormat) error {
	t := &table{head: []string{"ID", "STARTED (UTC)", strings.ToUpper(h.Metric.Label), "95% INTERVAL", "CHANGE"}}
	split := len(h.Series) > 1 || len(h.Series) == 1 && h.Series[0].Group != ""
	if split {
		t.head = append([]string{"GROUP"}, t.head...)
	}
	for _, s := range h.Series {
		at := map[int]catalog.Change{}
		for _, c := range s.Changes {
			at[c.Index] = c
		}
		for i, r := range s.Samples {
			interval := ""
			if r.Low != nil && r.High != nil {
				interval = "[" + num(*r.Low) + ", " + num(*r.High) + "]"
			}
			mark := ""
			if c, ok := at[i]; ok {
				mark = changeLine(c)
			}
			row := []string{catalog.ShortID(r.ID), stamp(r.StartedAt, "2006-01-02 15:04:05"), num(r.Value), interval, mark}
			if split {
				row = append([]string{s.Group}, row...)
			}
			t.add(row...)
		}
	}
	if err := out.print(w, t, h); err != nil || out.json || out.csv {
		return err
	}
	fmt.Fprintln(w)
	for _, s := range h.Series {
		name := h.Metric.Label
		if split {
			name = fmt.Sprintf("%s (%s)", h.Metric.Label, s.Group)
		}
		switch {
		case len(s.Samples) < catalog.MinChangeRuns:
			fmt.Fprintf(w, "%s: %s, too few to look for a change (%d at least)\n", name, human.Count(len(s.Samples), "run"), catalog.MinChangeRuns)
		case len(s.Changes) == 0:
			fmt.Fprintf(w, "%s: no change point in %d runs\n", name, len(s.Samples))
		}
		for _, c := range s.Changes {
			fmt.Fprintf(w, "%s changed at run %s (%s, the %s of %d): %s\n", name, catalog.ShortID(c.ID), stamp(c.StartedAt, "2006-01-02 15:04"), ordinal(c.Index+1), len(s.Samples), changeLine(c))
		}
	}
	return nil
}

// changeLine is "50,120 → 45,080 (-10.1%), p = 0.005".
func changeLine(c catalog.Change) string {
	return fmt.Sprintf("%s → %s (%+.1f%%), p = %.3f", num(c.Before), num(c.After), c.Change*100, c.PValue)
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
