package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// filterFlags pick catalogue entries.
type filterFlags struct{ catalog.Query }

func (f *filterFlags) add(fs *pflag.FlagSet, limit int) {
	fs.StringVar(&f.Workload, "workload", "", "only this workload's runs")
	fs.StringVar(&f.Target, "target", "", "only runs on this target kind, optionally with the start of its version: postgres, postgres:15")
	fs.StringVar(&f.Host, "host", "", "only runs from this host")
	fs.StringVar(&f.Kind, "kind", "", "only entries of this kind: run, merged, part, sweep")
	fs.StringVar(&f.Tool, "tool", "", "only documents of this tool: dbrig, hammerdb, benchbase, k6")
	fs.StringArrayVar(&f.Tags, "tag", nil, "only runs with this tag (repeatable: all of them)")
	fs.StringArrayVar(&f.Where, "where", nil, "only runs where KEY OP VALUE holds (repeatable: all of them): config.vus=8, metric.nopm>50000, target.version~15, commit=4f2a9c1; OP one of = != < <= > >= ~")
	fs.StringVar(&f.Since, "since", "", "only runs started since: a date (2026-11-01), a time (2026-11-01T12:00:00Z) or an age (7d, 12h)")
	fs.StringVar(&f.Until, "until", "", "only runs started before: a date, a time or an age")
	fs.IntVar(&f.Limit, "limit", limit, "at most this many, the newest (0: all)")
}

func newRuns() *cobra.Command {
	var cat catalogFlags
	var ff filterFlags
	var out outFormat
	c := &cobra.Command{
		Use:   "runs",
		Short: "List the catalogued runs, sweeps and merged documents",
		Long: `Lists what the results catalogue holds, the newest first, filtered by
workload, target, host, tags, a time span and conditions on config keys and
metrics (--where, all of which must hold). Each line gives the entry's ID
(the start of a hash of its document; any four or more of its first digits
name it), when it started, its workload and target, its headline metric with
the interval the run's own second-by-second throughput gives it, and what
limited it.`,
		Example: "  dbrig runs\n" +
			"  dbrig runs --workload tproc-c --where config.vus=8 --since 7d\n" +
			"  dbrig runs --target postgres:15 --tag nightly --markdown\n" +
			"  dbrig runs show 3f2a9c1b\n" +
			"  dbrig runs tag 3f2a9c1b baseline\n" +
			"  dbrig runs rm 3f2a9c1b",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			cg, f, err := cat.openFiltered(c.Context(), &ff)
			if err != nil {
				return err
			}
			defer cg.Close()
			return listRuns(c.Context(), cg, f, &out, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	addCatalogFlag(c.PersistentFlags(), &cat)
	ff.add(c.Flags(), 50)
	out.add(c.Flags())
	c.AddCommand(runsShow(&cat), runsTag(&cat), runsRemove(&cat))
	return c
}

func listRuns(ctx context.Context, cg *catalog.Catalog, f catalog.Filter, out *outFormat, stdout, stderr io.Writer) error {
	es, err := cg.List(ctx, f)
	if err != nil {
		return err
	}
	t := &table{head: []string{"ID", "STARTED (UTC)", "KIND", "WORKLOAD", "TARGET", "HOST", "HEADLINE", "95% INTERVAL", "LIMITED BY", "TAGS"}}
	for _, e := range es {
		head, interval := headline(e)
		t.add(catalog.ShortID(e.ID), stamp(e.StartedAt, "2006-01-02 15:04:05"), entryKind(e), cmpOr(e.Workload, e.Name), strings.TrimSpace(e.TargetKind+" "+e.TargetVersion), e.Host, head, interval, e.Verdict, strings.Join(e.Tags, ","))
	}
	if err := out.print(stdout, t, es); err != nil {
		return err
	}
	if !out.json && !out.csv && !out.markdown {
		all := f
		all.Limit = 0
		n, err := cg.Count(ctx, all)
		switch {
		case err != nil:
			return err
		case n == 0:
			fmt.Fprintf(stderr, "No runs in %s match; dbrig run records each run, dbrig catalog import DIR older ones.\n", cg.Name())
		case n > len(es):
			fmt.Fprintf(stderr, "The newest %d of %d; --limit 0 lists all.\n", len(es), n)
		}
	}
	return nil
}

// entryKind is the entry's kind, with its tool where another made it.
func entryKind(e *catalog.Entry) string {
	if e.Tool != "dbrig" {
		return e.Tool + " " + e.Kind
	}
	return e.Kind
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// headline is the entry's primary metric as "12,345 NOPM" and its
// interval, "" where it has none.
func headline(e *catalog.Entry) (string, string) {
	m, ok := e.Metric(e.Primary)
	if e.Kind == catalog.KindSweep {
		return e.Config["points"] + " points × " + e.Config["repeat"], ""
	}
	if !ok {
		return "", ""
	}
	v := num(m.Value) + " " + m.Label
	if m.Low == nil || m.High == nil {
		return v, ""
	}
	return v, "[" + num(*m.Low) + ", " + num(*m.High) + "]"
}

func runsShow(cat *catalogFlags) *cobra.Command {
	var doc bool
	var out outFormat
	c := &cobra.Command{
		Use:     "show ID",
		Short:   "Show one catalogued entry: its metrics, config and tags, or its document",
		Example: "  dbrig runs show 3f2a9c1b\n  dbrig runs show 3f2a9c1b --document > run.json\n  dbrig report --html run.html run.json",
		Args:    oneID("dbrig runs show ID"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			cg, err := cat.open(c.Context())
			if err != nil {
				return err
			}
			defer cg.Close()
			if doc {
				b, err := cg.Document(c.Context(), args[0])
				if err != nil {
					return err
				}
				_, err = c.OutOrStdout().Write(b)
				return err
			}
			e, err := cg.Get(c.Context(), args[0])
			if err != nil {
				return err
			}
			return showEntry(c.OutOrStdout(), e, &out)
		},
	}
	c.Flags().BoolVar(&doc, "document", false, "print the document itself, as it was catalogued")
	out.add(c.Flags())
	return c
}

func showEntry(w io.Writer, e *catalog.Entry, out *outFormat) error {
	t := &table{head: []string{"FIELD", "VALUE"}}
	t.add("id", e.ID)
	t.add("kind", entryKind(e))
	t.add("workload", cmpOr(e.Workload, e.Name))
	t.add("target", strings.TrimSpace(e.TargetKind+" "+e.TargetVersion+" "+e.TargetURL))
	t.add("host", e.Host)
	t.add("started", e.StartedAt.Format(time.RFC3339))
	if e.Seconds > 0 {
		t.add("window", human.FormatDuration(time.Duration(e.Seconds*float64(time.Second))))
	}
	t.add("limited by", e.Verdict)
	t.add("commit", e.Commit)
	t.add("tags", strings.Join(e.Tags, ", "))
	t.add("document", e.Path+" ("+human.Bytes(float64(e.Size))+", schema "+fmt.Sprint(e.Schema)+")")
	for _, m := range e.Metrics {
		v := num(m.Value)
		if m.Low != nil && m.High != nil {
			v += " [" + num(*m.Low) + ", " + num(*m.High) + "]"
		}
		t.add("metric "+m.Key, strings.TrimSpace(v+" "+m.Label))
	}
	for _, k := range sortedKeys(e.Config) {
		t.add("config "+k, e.Config[k])
	}
	return out.print(w, t, e)
}

func runsTag(cat *catalogFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "tag ID TAG...",
		Short:   "Tag a catalogued entry",
		Example: "  dbrig runs tag 3f2a9c1b baseline pg15",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return exitcode.Userf("name the entry and its tags: dbrig runs tag ID TAG...")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			cg, err := cat.open(c.Context())
			if err != nil {
				return err
			}
			defer cg.Close()
			id, err := cg.Tag(c.Context(), args[0], args[1:])
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Tagged %s: %s\n", catalog.ShortID(id), human.Safe(strings.Join(args[1:], ", ")))
			return nil
		},
	}
}

func runsRemove(cat *catalogFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "rm ID",
		Short:   "Take an entry out of the catalogue (its document's own file stays)",
		Example: "  dbrig runs rm 3f2a9c1b",
		Args:    oneID("dbrig runs rm ID"),
		RunE: func(c *cobra.Command, args []string) error {
			cg, err := cat.open(c.Context())
			if err != nil {
				return err
			}
			defer cg.Close()
			id, err := cg.Remove(c.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Removed %s from %s\n", catalog.ShortID(id), cg.Name())
			return nil
		},
	}
}

func oneID(usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return exitcode.Userf("name one entry by its ID: %s (dbrig runs lists them)", usage)
		}
		return nil
	}
}

// num is a figure as a person reads it: digits grouped from 100 up,
// three significant ones below.
func num(v float64) string {
	if math.Abs(v) >= 100 || math.IsNaN(v) || math.IsInf(v, 0) {
		return human.Thousands(v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
