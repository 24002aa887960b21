package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/experiment"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
)

// sweepLong and sweepExample are dbrig sweep's help.
const (
	sweepLong = `Runs the experiment a YAML spec describes: the product of its vary lists,
each point repeated in an interleaved order (A B C A B C ...). Every run's
document goes to DIR/runs, and DIR/sweep.json holds the matrix, the mean
of each of the workload's metrics with its 95% confidence interval per
point and the change over the baseline; it is rewritten after every run.

A managed target (target: {managed: postgres}) is a server dbrig creates in
DIR/server and restarts whenever the point's server settings change. The
schema is built once. A managed server can be confined to a memory size
(page cache included) and a set of CPUs, fixed (target: {managed: postgres,
memory: 2GB, cpus: "1"}) or varied (vary: {memory: [1GB, 2GB, 4GB]}); this
needs writable cgroups (root), and the client keeps off the server's CPUs.

A managed target can compare builds of its server: target: {managed:
postgres, servers: {pg15: BIN_DIR, pg18: BIN_DIR}} with vary: {server:
[pg15, pg18]} runs each point on its build's binaries. Every build is
checked before anything runs; builds that cannot read each other's data
get a cluster each (DIR/server-NAME), built from the same seed.

A managed target, or a build of target.servers, can be a cluster
(replicas: N, sync_replicas, ha: patroni, ...). Its runs can lose the
primary (run: {failover_at: 20s}, fixed or varied; the cluster starts
again, its lost node made anew, before the next run): each point then
gets the outage around the failover, overall and per virtual user, with
its 95% interval and its change over the baseline in seconds, and its
transactions in doubt. run: {audit_durability: true} has every run log
what the database acknowledged, in DIR/runs beside its document, and look
each up after the run, as dbrig run --audit-durability does: each point
gets acknowledged, missing and in doubt, summed, and the missing's mean
with its interval; thresholds: ['lost_acks<1'] then holds every run to it.

A run whose errors pass --max-error-rate (1% of its window's transactions
by default; the bound is the command line's, and a resume may change it) is
kept as DIR/runs/pNN-rK-errors.json but not counted, and stops the sweep,
exit code 1: what failed it would most likely fail every run after it. Once
it is fixed, dbrig sweep --resume DIR runs it again.

A spec's thresholds: ['new_order.p95<5ms', 'errors<0.1%'] hold every run
to what dbrig run --threshold takes; the verdicts go into each run's
document and the sweep's, the misses are listed at the end, and one makes
the exit code 1, once everything is saved.

Ctrl-C stops after the current run; a second Ctrl-C, or SIGTERM, interrupts
that run, whose document is kept but not counted; one more has it stop
waiting (for a server that does not answer) and write what it has. Either
way the exit code is 4, and dbrig sweep --resume DIR carries on from there.` + targetLong
	sweepExample = `  dbrig sweep experiments/buffer-cache.yaml --dry-run
  dbrig sweep experiments/buffer-cache.yaml --out results/bc
  dbrig sweep --resume results/bc
  dbrig sweep experiments/buffer-cache.yaml ` + metricsExample + `

With --metrics-addr, one server follows the whole sweep: each run's series
(as for dbrig run) carry point, params and repetition labels.`
)

// sweepFlags are dbrig sweep's flags.
type sweepFlags struct {
	dryRun                        bool
	out, resume, url, metricsAddr string
	maxErrors                     errorBound
	cat                           catalogFlags
}

func newSweep() *cobra.Command {
	var f sweepFlags
	c := &cobra.Command{
		Use:     "sweep FILE.yaml",
		Short:   "Run an experiment: every point of a matrix, repeated, with confidence intervals",
		Long:    sweepLong,
		Example: sweepExample,
		Args:    cobra.MaximumNArgs(1),
		RunE:    f.run,
	}
	fs := c.Flags()
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the matrix, the run order and the estimated duration; run nothing")
	fs.StringVar(&f.out, "out", "", "directory for the sweep's documents (default dbrig-results/sweep-NAME-TIME)")
	fs.StringVar(&f.resume, "resume", "", "carry on the sweep in this directory from its last finished run")
	fs.StringVar(&f.url, "target", "", "with --resume: the target URL again, when it holds a password (never stored)")
	addMetricsFlag(fs, &f.metricsAddr)
	addErrorBoundFlag(fs, &f.maxErrors, "a run")
	addRecordFlags(fs, &f.cat)
	return c
}

func (f *sweepFlags) run(c *cobra.Command, args []string) error {
	sw, err := f.open(args)
	if err != nil {
		return err
	}
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	if f.dryRun {
		return dryRun(c.Context(), stdout, sw)
	}
	if f.resume == "" {
		if _, err := os.Stat(sw.Path()); err == nil {
			return exitcode.Userf("%s already holds a sweep: carry it on with `dbrig sweep --resume %s`, or choose another --out", sw.Dir, sw.Dir)
		}
	} else if sw.Doc.Complete {
		fmt.Fprintf(stderr, "The sweep in %s is already complete.\n", sw.Dir)
		printResults(stdout, sw)
		return sweepThresholds(stdout, sw)
	}
	if err := f.cat.check(c.Context()); err != nil {
		return err
	}
	// Every build is checked before the sweep's first line, so a
	// missing one is refused in one line and leaves nothing behind;
	// the sweep checks them again as it starts.
	if sw.Spec.Target.Managed {
		if _, err := sw.UsableServerBuilds(c.Context()); err != nil {
			return err
		}
	}
	return runSweep(sw, f, stdout, stderr)
}

// open is the sweep the command line names: the one --resume carries on,
// or a new one of the spec in args.
func (f *sweepFlags) open(args []string) (*experiment.Sweep, error) {
	switch {
	case f.resume != "" && len(args) > 0:
		return nil, exitcode.Userf("give either a spec file or --resume DIR, not both")
	case f.resume != "" && f.out != "":
		return nil, exitcode.Userf("--out does not apply to --resume: the sweep carries on in its own directory")
	case f.resume != "":
		return experiment.Resume(f.resume, f.url)
	case len(args) == 0:
		return nil, exitcode.Userf("name an experiment spec: dbrig sweep FILE.yaml (or dbrig sweep --resume DIR)")
	case f.url != "":
		return nil, exitcode.Userf("--target applies to --resume only; the spec names its target")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return nil, exitcode.Userf("read the experiment spec: %v", err)
	}
	spec, err := experiment.Parse(args[0], data)
	if err != nil {
		return nil, err
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("dbrig-results", fmt.Sprintf("sweep-%s-%s", safeName.ReplaceAllString(spec.Name, "-"), time.Now().UTC().Format("20060102T150405Z")))
	}
	return experiment.New(spec, dir), nil
}

// dryRun is --dry-run: the plan, the server builds and the check of the
// server settings' names; nothing runs.
func dryRun(ctx context.Context, w io.Writer, sw *experiment.Sweep) error {
	var builds []experiment.ServerBuild
	if sw.Spec.Target.Managed {
		var err error
		if builds, err = sw.ServerBuilds(ctx); err != nil {
			return err
		}
	}
	note, err := checkSettingNames(ctx, sw, builds)
	if err != nil {
		return err
	}
	printPlan(w, sw)
	if th := sw.Spec.ThresholdExprs(); len(th) > 0 {
		fmt.Fprintf(w, "Thresholds, every run: %s\n", strings.Join(th, " "))
	}
	printBuilds(w, sw, builds)
	fmt.Fprint(w, note)
	return nil
}

// safeName keeps a spec's name from reaching outside the results directory.
var safeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func runSweep(sw *experiment.Sweep, f *sweepFlags, stdout, stderr io.Writer) error {
	metrics, err := serveMetrics(f.metricsAddr, stderr)
	if err != nil {
		return err
	}
	if metrics != nil {
		defer metrics.Close()
	}
	stop := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C stops after the current run, a second one interrupts it, a
	// third has it stop waiting (for a server that does not answer) and
	// write what it has; a SIGTERM interrupts it at once. One more quits.
	quit := make(chan struct{})
	var stopOnce sync.Once
	level := 0
	step := func(sig os.Signal) {
		switch {
		case level == 0 && sig == os.Interrupt:
			fmt.Fprintln(stderr, "\ndbrig: stopping after the current run; press Ctrl-C again to interrupt it")
			level = 1
		case level < 2:
			fmt.Fprintln(stderr, "\ndbrig: interrupting the current run; its document is kept but not counted; press Ctrl-C again to stop waiting and write what it has")
			cancel()
			level = 2
		case level == 2:
			fmt.Fprintln(stderr, "\ndbrig: writing what the current run has; press Ctrl-C again to quit at once")
			close(quit)
			level = 3
		default:
			fmt.Fprintln(stderr, "\ndbrig: quitting at once")
			os.Exit(130)
		}
		stopOnce.Do(func() { close(stop) })
	}
	defer onSignals(stderr, step, step, step)()

	total := len(sw.Doc.Order)
	if sw.Doc.Done == 0 {
		fmt.Fprintf(stderr, "Sweep %s: %s, about %s; documents in %s\n",
			sw.Spec.Name, runCount(sw), human.FormatDuration(estimate(sw)), sw.Dir)
	} else {
		fmt.Fprintf(stderr, "Resuming sweep %s at run %d of %d; documents in %s\n", sw.Spec.Name, sw.Doc.Done+1, total, sw.Dir)
	}
	p := newProgress(stderr)
	opt := experiment.Options{Log: stderr, Progress: p.update, ProgressDone: p.done, Stop: stop, Quit: quit, MaxErrorPct: new(float64(f.maxErrors))}
	if metrics != nil {
		opt.Live = func(info workload.Info, r workload.Run, labels map[string]string) runner.Live {
			return metrics.Follow(info, r, labels)
		}
	}
	err = sw.Run(ctx, opt)
	p.done()
	f.cat.record(context.Background(), stdout, stderr, sweepDocuments(sw)...)
	if err != nil {
		if ctx.Err() != nil && !errors.As(err, new(*exitcode.UserError)) {
			return &interrupted{fmt.Sprintf("sweep interrupted: %v; carry on with `dbrig sweep --resume %s`", human.OneLine(err), sw.Dir)}
		}
		return err
	}
	printResults(stdout, sw)
	if sw.Doc.Interrupted {
		fmt.Fprintf(stdout, "Stopped after %d of %d runs; carry on with: dbrig sweep --resume %s\n", sw.Doc.Done, total, sw.Dir)
	}
	if err := sweepThresholds(stdout, sw); err != nil || !sw.Doc.Interrupted {
		return err
	}
	// A sweep a signal stopped before its end did not do what it was
	// asked, though every run it finished counts.
	return &interrupted{}
}

// sweepDocuments are the documents of sw's finished runs, then its own,
// for the catalogue; nothing where the sweep document was never written.
func sweepDocuments(sw *experiment.Sweep) []string {
	if _, err := os.Stat(sw.Path()); err != nil {
		return nil
	}
	var out []string
	for _, p := range sw.Doc.Points {
		for _, r := range p.Runs {
			if r != "" {
				out = append(out, filepath.Join(filepath.Dir(sw.Path()), r))
			}
		}
	}
	return append(out, sw.Path())
}

// runCount is "8 points × 3 repetitions = 24 runs".
func runCount(sw *experiment.Sweep) string {
	return fmt.Sprintf("%s × %s = %s", plural(len(sw.Points), "point"), plural(sw.Spec.Repeat, "repetition"), plural(len(sw.Doc.Order), "run"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// estimate is the time the sweep's remaining runs take, with the builds
// of the schema that cannot be there yet.
func estimate(sw *experiment.Sweep) time.Duration {
	return sw.Spec.Estimate(sw.Points, sw.Doc.Order, sw.Doc.Done, schemaBuilds(sw))
}

// schemaBuilds counts the schema's builds still to do: one per managed
// cluster not yet created, if the workload has a schema; an external
// target is taken as built.
func schemaBuilds(sw *experiment.Sweep) int {
	if !sw.Spec.Target.Managed || !sw.Spec.Builds() {
		return 0
	}
	builds, err := sw.ServerBuilds(context.Background())
	if err != nil {
		return 1
	}
	clusters := map[string]bool{}
	for _, b := range builds {
		if b.Err != nil || !b.Server.Exists() {
			clusters[b.Dir] = true
		}
	}
	return len(clusters)
}

// checkSettingNames is --dry-run's check of the server settings' names
// against each build's binaries, which starts nothing. Without binaries
// to ask, note says the names were not checked: a plan is still worth
// printing on a machine that will not run the sweep.
func checkSettingNames(ctx context.Context, sw *experiment.Sweep, builds []experiment.ServerBuild) (note string, err error) {
	checked := false
	for _, b := range builds {
		names := sw.ServerSettingNames(b.Name)
		if len(names) == 0 {
			continue
		}
		if b.Err != nil {
			return fmt.Sprintf("Setting names: not checked (%v)\n", human.OneLine(b.Err)), nil
		}
		if err := b.Server.CheckSettingNames(ctx, names); err != nil {
			if b.Name != "" {
				err = fmt.Errorf("target.servers.%s: %w", b.Name, err)
			}
			return "", exitcode.Userf("%s: %v", sw.Spec.File, err)
		}
		checked = true
	}
	if !checked {
		return "", nil
	}
	return "Setting names: known to " + targetName(sw.Spec) + "\n", nil
}

// printBuilds is --dry-run's list of the server builds a sweep compares:
// each one's binaries, version and cluster.
func printBuilds(w io.Writer, sw *experiment.Sweep, builds []experiment.ServerBuild) {
	if len(sw.Spec.Target.Servers) == 0 {
		return
	}
	fmt.Fprintln(w, "\nServer builds:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, b := range builds {
		bin, shape := "", ""
		for _, p := range sw.Spec.Target.Servers {
			if p.Name == b.Name {
				bin = strings.TrimSpace(p.Kind + " " + p.Bin)
				if !p.Topology.IsZero() {
					shape = p.Topology.String() + ", "
				}
			}
		}
		if b.Err != nil {
			fmt.Fprintf(tw, "  %s\t%s\tnot usable: %s\t\n", b.Name, bin, human.OneLine(b.Err))
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%scluster %s\t\n", b.Name, bin, b.Version, shape, b.Dir)
	}
	tw.Flush()
}

func targetName(s *experiment.Spec) string {
	if s.Target.Managed {
		kinds := s.Target.Kinds()
		if len(kinds) > 1 {
			return "managed " + strings.Join(kinds, " and ") + " servers"
		}
		return "a managed " + kinds[0] + " server"
	}
	return dbtarget.Redact(s.Target.URL)
}

// printPlan is --dry-run: the matrix, the order and the estimate.
func printPlan(w io.Writer, sw *experiment.Sweep) {
	s := sw.Spec
	fmt.Fprintf(w, "Sweep %s: %s on %s\n\n", s.Name, s.Workload, targetName(s))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "point")
	for _, name := range s.Varied() {
		fmt.Fprint(tw, "\t"+name)
	}
	for _, f := range s.Follow {
		fmt.Fprintf(tw, "\t%s (follows %s)", f.Name, f.Follows)
	}
	fmt.Fprintln(tw, "\t")
	for i, pt := range sw.Points {
		fmt.Fprintf(tw, "%d", i+1)
		for _, q := range append(pt.Params, s.Following(pt)...) {
			fmt.Fprint(tw, "\t"+q.Value)
		}
		mark := ""
		if s.IsBaseline(pt) {
			mark = "baseline"
		}
		fmt.Fprintln(tw, "\t"+mark)
	}
	tw.Flush()

	order := sw.Doc.Order
	fmt.Fprintf(w, "\n%s", runCount(sw))
	if sw.Doc.Done > 0 {
		fmt.Fprintf(w, " (%d done)", sw.Doc.Done)
	}
	fmt.Fprintln(w)
	var reps []string
	for rep := 1; rep <= s.Repeat; rep++ {
		var ids []string
		for _, o := range order {
			if o[1] == rep {
				ids = append(ids, fmt.Sprint(o[0]+1))
			}
		}
		reps = append(reps, strings.Join(ids, " "))
	}
	fmt.Fprintf(w, "Order (point numbers, repetitions interleaved): %s\n", strings.Join(reps, " | "))
	// Each fixed value under its section's name, as the spec writes it: a
	// workload's own run.repeat is not the sweep's repeat.
	var fixed []string
	for _, sec := range []struct {
		name   string
		params []experiment.Param
	}{{"run", s.Run}, {"build", s.Build}, {"settings", s.Target.Settings}} {
		for _, p := range sec.params {
			fixed = append(fixed, sec.name+"."+p.Name+"="+p.Value)
		}
	}
	for _, name := range []string{experiment.MemoryParam, experiment.CPUsParam} {
		if v, ok := s.Target.Confine(name); ok {
			fixed = append(fixed, "target."+name+"="+v)
		}
	}
	fmt.Fprintf(w, "Fixed: %s\n", strings.Join(fixed, " "))
	d := estimate(sw)
	how := fmt.Sprintf("runs with ~%s overhead each", experiment.RunOverhead)
	if n := s.Restarts(sw.Points, order[sw.Doc.Done:]); n > 0 {
		how += ", " + plural(n, "server start")
	}
	if n := schemaBuilds(sw); n > 0 {
		how += ", " + plural(n, "build") + " of the schema"
	}
	fmt.Fprintf(w, "Estimated duration: about %s (%s)\n", human.FormatDuration(d), how)
}

// printResults is the table at the end: a line per point, with every
// metric's mean and interval, the change in the primary one, and what
// limited most of its repetitions.
func printResults(w io.Writer, sw *experiment.Sweep) {
	doc := sw.Doc
	primary := doc.Primary()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "point\t")
	for _, name := range doc.Varied {
		fmt.Fprint(tw, name+"\t")
	}
	if doc.VariesServer() {
		fmt.Fprint(tw, "server version\t")
	}
	fmt.Fprint(tw, "n\t")
	for _, m := range doc.Metrics {
		fmt.Fprint(tw, m.Label+" ± 95% CI\t")
	}
	fmt.Fprintf(tw, "p95 ms ± 95%% CI\t%s change %% [95%% interval]\tlimited by\t", primary.Label)
	outage, audited, retried := doc.HasFault(result.OutageKey), doc.Audited(), doc.HasFault(result.RetriesKey)
	if outage {
		fmt.Fprint(tw, "outage s ± 95% CI\tper VU median/max s\t")
	}
	if audited {
		fmt.Fprint(tw, "missing\tin doubt\t")
	}
	if retried {
		fmt.Fprint(tw, "retries/min ± 95% CI\taborts/min\tretrying % ± 95% CI\t")
	}
	fmt.Fprintln(tw)
	for i, pt := range doc.Points {
		fmt.Fprintf(tw, "%d\t", i+1)
		for _, name := range doc.Varied {
			fmt.Fprint(tw, pt.Params[name]+"\t")
		}
		if doc.VariesServer() {
			fmt.Fprint(tw, pt.ServerVersion+"\t")
		}
		fmt.Fprintf(tw, "%d\t", len(pt.Values[primary.Key]))
		for _, m := range doc.Metrics {
			fmt.Fprint(tw, withCI(pt.Stats[m.Key])+"\t")
		}
		p95 := "-"
		if st := pt.P95Stats(); st != nil {
			p95 = fmt.Sprintf("%.1f", st.Mean)
			if st.N > 1 {
				p95 += fmt.Sprintf(" ± %.1f", (st.CIHigh-st.CILow)/2)
			}
		}
		limited, _ := pt.LimitedBy()
		if limited == "" {
			limited = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t", p95, gainText(sw, i), limited)
		if outage {
			fmt.Fprint(tw, outageText(pt))
		}
		if audited {
			fmt.Fprint(tw, auditText(pt))
		}
		if retried {
			fmt.Fprintf(tw, "%s\t%s\t%s\t", withCI(pt.FaultStats[result.RetriesKey]), meanOf(pt.FaultStats[result.AbortsKey]), withCI(pt.FaultStats[result.RetryShareKey]))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, l := range append(report.SweepFaultLines(doc), report.SweepConflictLines(doc)...) {
		fmt.Fprintln(w, l)
	}
	for _, l := range report.SweepSteadyLines(doc) {
		fmt.Fprintln(w, l)
	}
	for _, n := range doc.Notes {
		fmt.Fprintln(w, "Note: "+n)
	}
	fmt.Fprintf(w, "Sweep: %s\n", sw.Path())
}

// outageText is a point's cells of the outage: its mean with the half
// of its interval, and its mean per-VU median and max.
func outageText(pt result.SweepPoint) string {
	st := pt.FaultStats[result.OutageKey]
	if st == nil {
		return "-\t-\t"
	}
	mean := withCI(st)
	perVU := "-"
	if med, mx := pt.FaultStats[result.OutageVUMedianKey], pt.FaultStats[result.OutageVUMaxKey]; med != nil && mx != nil {
		perVU = figure(med.Mean) + "/" + figure(mx.Mean)
	}
	return mean + "\t" + perVU + "\t"
}

// auditText is a point's cells of its audits: missing of acknowledged,
// and in doubt, summed.
func auditText(pt result.SweepPoint) string {
	du := pt.Durability
	if du == nil {
		return "-\t-\t"
	}
	return fmt.Sprintf("%s of %s\t%s\t", human.Thousands(float64(du.Missing)), human.Thousands(float64(du.Acknowledged)), human.Thousands(float64(du.InDoubt)))
}

// withCI prints a mean with the half of its 95% interval, where it has
// one; "-" for none.
func withCI(st *result.Stats) string {
	if st == nil {
		return "-"
	}
	mean := figure(st.Mean)
	if st.N > 1 {
		mean += " ± " + figure((st.CIHigh-st.CILow)/2)
	}
	return mean
}

// figure prints a metric's value at a precision fitting its size.
func figure(x float64) string {
	if math.Abs(x) >= 100 {
		return human.Thousands(x)
	}
	return fmt.Sprintf("%.3g", x)
}

func gainText(sw *experiment.Sweep, i int) string {
	doc := sw.Doc
	key := doc.PrimaryMetric
	pt := doc.Points[i]
	g := pt.Gains[key]
	switch {
	case sw.Spec.IsBaseline(sw.Points[i]):
		return "baseline"
	case g == nil:
		return "-"
	case len(pt.Values[key]) < 2 || len(doc.Points[pt.BaselinePoint].Values[key]) < 2:
		return fmt.Sprintf("%+.1f%% (not significant: no interval from one repetition)", g.Pct)
	case !g.Significant:
		return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f] (not significant)", g.Pct, g.Low, g.High)
	}
	return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", g.Pct, g.Low, g.High)
}

// meanOf prints a mean alone; "-" for none.
func meanOf(st *result.Stats) string {
	if st == nil {
		return "-"
	}
	return figure(st.Mean)
}
