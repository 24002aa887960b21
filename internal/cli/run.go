package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/parts"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type runFlags struct {
	runner.Options
	jsonPath    string
	resultsDir  string
	metricsAddr string
	with        []string
	audit       bool
	kill        killFlags
	// part is --part's i/n, read into Options.Split by check.
	part string
	// thresholds are --threshold's, as written.
	thresholds []string
	// thresholdsOnInterrupt judges them on an interrupted window too.
	thresholdsOnInterrupt bool
	// maxErrors is --max-error-rate.
	maxErrors errorBound
	cat       catalogFlags
}

func newRun() *cobra.Command {
	return workloadCommand("run", "Drive a workload with virtual users and record the result", func(w workload.Workload, url *string) *cobra.Command {
		var f runFlags
		c := &cobra.Command{
			Short:   runShort(w),
			Long:    runLong(w),
			Example: runExamples(w),
			RunE: func(c *cobra.Command, _ []string) error {
				ctx, hard, stop := runSignals(c.ErrOrStderr())
				defer stop()
				f.Quit = hard.Done()
				return run(ctx, hard, w, *url, f, c.OutOrStdout(), c.ErrOrStderr())
			},
		}
		fs := c.Flags()
		f.Options = runner.Defaults()
		runner.AddFlags(fs, &f.Options, w.Info().FixedWork)
		fs.BoolVar(&f.Telemetry.Off, "no-telemetry", false, "record no host or database telemetry (see --sample)")
		fs.StringVar(&f.jsonPath, "json", "", "write the result document here")
		fs.StringVar(&f.resultsDir, "results-dir", "dbrig-results", "where result documents go when --json is not given")
		addMetricsFlag(fs, &f.metricsAddr)
		addRecordFlags(fs, &f.cat)
		addThresholdFlags(fs, &f, w.Info())
		addErrorBoundFlag(fs, &f.maxErrors, "the run")
		if !w.Info().FixedWork {
			fs.StringArrayVar(&f.with, "with", nil, "also drive WORKLOAD:VUS in the same window, with its defaults (repeatable): --with dvd-reports:2; with --vus 0 it runs alone")
		}
		if !w.Info().FixedWork {
			addPartFlags(fs, &f)
		}
		if _, ok := w.(workload.DurabilityAuditor); ok {
			fs.BoolVar(&f.audit, "audit-durability", false, "log every change the database acknowledges, beside the result, and look each up after the run (see dbrig audit durability)")
		}
		f.kill.add(fs, &f.Options)
		w.RunFlags(fs)
		sessionsAlias(fs)
		return c
	})
}

// sessionsAlias lets --sessions name --vus, as the SLOB method and the
// CPU study call them, where the workload has no --sessions of its own:
// each virtual user is one database session.
func sessionsAlias(fs *pflag.FlagSet) {
	if fs.Lookup("sessions") != nil || fs.Lookup("vus") == nil {
		return
	}
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "sessions" {
			name = "vus"
		}
		return pflag.NormalizedName(name)
	})
}

// runShort is the run command's one line for the workload.
func runShort(w workload.Workload) string {
	if w.Info().FixedWork {
		return "Run " + w.Name() + "'s fixed amount of work and record the result"
	}
	return "Drive " + w.Name() + " with virtual users and record the result"
}

// runLong is the run command's description: a timed window, or a fixed
// amount of work.
func runLong(w workload.Workload) string {
	if w.Info().FixedWork {
		return `Runs the workload's fixed amount of work, every session starting at once,
and measures it from the first start to the last finish. The result
document goes to --json, or into --results-dir with its path printed.
Ctrl-C or SIGTERM stops the run early and keeps the result, marked
interrupted; the exit code is then 4.` + errorsLong + faultLong + liveLong + thresholdLong(w.Info())
	}
	long := `Runs virtual users over a ramp-up, then measures a window of --duration.
Only the window counts. The result document goes to --json, or into
--results-dir with its path printed. Ctrl-C or SIGTERM ends the window early
and keeps the result, marked interrupted; the exit code is then 4.` + errorsLong + poolLong(w) + faultLong + liveLong + killLong + thresholdLong(w.Info())
	if _, ok := w.(workload.DurabilityAuditor); ok {
		long += auditLong
	}
	return long
}

// faultLong tells what a run does when its server goes away or stalls.
const faultLong = `

A server out of reach for --lost-after, every virtual user failing to
reconnect, or silent that long (no transaction ending while virtual users
wait in one, as with a frozen server or a connection left half-open), ends
the run: the result is kept, marked server_lost (when, how long without a
server, the errors, silent or not), its figures cover the seconds the
server answered, and the exit code is 1. A stretch of --stall-after in
which no transaction ends while virtual users wait in one is named a stall
in the result's notes. The window's edges wait for the transactions in
hand no longer than --stall-after, and a window that closes late says by
how much. Each second of the series keeps its latency p50, p95, p99 and
max, which the report draws around kills and stalls. A second Ctrl-C (or
SIGTERM) stops waiting for anything, a server or the audit, and writes
what the run has; a third quits at once.`

// poolLong tells what --connections does.
func poolLong(w workload.Workload) string {
	return `

--connections M runs the virtual users as terminals over a pool of M
sessions, as a transaction monitor lends its connections: a terminal holds
a session only while its transaction runs, and thinks without one. Its
response time counts from its send, the wait for a session included; the
wait is recorded on its own, the summary gives the sessions in use (p95,
max), and a pool too small for the load is said in one line. A workload
whose virtual users cannot share sessions refuses it. For example, 200
virtual users on 10 sessions:
  dbrig run ` + w.Name() + ` --vus 200 --connections 10`
}

// killLong tells what --kill-server-at does.
const killLong = `

--kill-server-at 15s kills the managed server in --server-dir (started with
dbrig server start --dir DIR; --target must be on it) with SIGKILL that long
after the run starts, ramp-up included, starts it again after
--restart-after, on the same port, and lets the run carry on: virtual users
reconnect, errors are counted by class, transactions whose commit the kill
left unanswered are counted in doubt, and the result records the kill and
the restart, which the report marks on the throughput chart, and the
outage: the longest stretch in which no transaction completed, overall and
for each virtual user, until every one has completed one again.
--kill-node-at 20s kills one node (--kill-node, the last by default) of the
multi-master cluster in --server-dir (dbrig server start --kind mariadb
--nodes 3) for good: the others carry on, the virtual users on it move to
the next node, and the outage is measured the same way.

On a target of several nodes (a URL of several hosts, or --target again
for each node) each virtual user's session goes to one node, round-robin
or by --node-affinity, and to the next node where its own is lost. What the
database aborts and asks the client to retry (a serialization failure, a
deadlock, a certification conflict) runs again with the same inputs, up to
--max-retries times, each after a random wait below --retry-backoff doubled
per retry (at most --retry-backoff-max); the result counts per type the
retries, the aborts still failing after the last one, and the time they
took, inside each transaction's latency, which runs from its first attempt.`

// auditLong tells what --audit-durability does.
const auditLong = `

--audit-durability logs every change the database acknowledges as committed
(tproc-c: each New-Order, as w, d, o_id), and every commit sent but never
answered (in doubt), into RESULT.acks beside the result. After the run each
is looked up again, then the consistency check runs; the result gets
durability {acknowledged, missing, in_doubt}, missing ones are named, and
the exit code is 1 if any is missing. --threshold 'lost_acks<1' holds the
missing to a count, judged once the audit has run (not judged where there
was none: a server lost). dbrig never weakens the server's durability
settings itself.`

// liveLong tells what --metrics-addr serves.
const liveLong = `

--metrics-addr serves the run live to Prometheus: transactions, intended
rollbacks, errors, transactions in doubt and retries per type
(dbrig_*_total{type}), latency
histograms (dbrig_transaction_duration_seconds), the phase
(dbrig_phase{phase="measure"} is 1 in the measured window), running VUs
and the workload's primary metric (dbrig_headline{metric,unit}).`

// runExamples are the workload's own examples, or timed-run ones, and
// the live metrics.
func runExamples(w workload.Workload) string {
	live := "\n  dbrig run " + w.Name() + " " + metricsExample
	kill := "--target URL --server-dir DIR --kill-server-at 15s"
	if _, ok := w.(workload.DurabilityAuditor); ok {
		kill += " --audit-durability   # URL: what dbrig server start --dir DIR printed"
	}
	live += "\n  dbrig run " + w.Name() + " " + kill
	live += "\n  dbrig run " + w.Name() + " --target mariadb://bench@n1/bench --target mariadb://bench@n2/bench --target mariadb://bench@n3/bench   # a cluster whose nodes all take writes: the VUs spread over them"
	if _, ok := w.(workload.DurabilityAuditor); ok {
		live += "\n  dbrig run " + w.Name() + " --target URL --server-dir DIR --kill-node-at 20s --kill-node node2 --audit-durability   # DIR: dbrig server start --kind mariadb --nodes 3 --dir DIR"
	}
	live += "\n  dbrig run " + w.Name() + " --isolation serializable --max-retries 20 --retry-backoff 2ms"
	live += "\n  dbrig run " + w.Name() + " --threshold '" + result.ThresholdExample(w.Info()) + "' --threshold 'errors<0.1%'   # exit code 1 if one is missed"
	if _, ok := w.(workload.Resummarizer); ok {
		live += "\n  dbrig run " + w.Name() + " --target postgres://bench@db/bench --vus 300 --part 1/3 --json p1.json   # and 2/3, 3/3 on two other hosts, then: dbrig merge p1.json p2.json p3.json"
	}
	if e, ok := w.(workload.Exampler); ok {
		return "  " + strings.Join(e.Examples(), "\n  ") + live
	}
	return "  dbrig run " + w.Name() + "\n" +
		"  dbrig run " + w.Name() + " --target postgres://bench@localhost/bench --vus 4 --duration 5m --json r.json\n" +
		"  dbrig report --text r.json      # the run's load profile, waits, top SQL, CPUs and disks" + live
}

// run runs w on url as f says; ctx ends with the first interrupt, hard
// with the second, which cuts short what follows the run too (the
// durability audit).
func run(ctx, hard context.Context, w workload.Workload, url string, f runFlags, stdout, stderr io.Writer) error {
	with, err := f.check(w)
	if err != nil {
		return err
	}
	thresholds, err := f.parseThresholds(w, with)
	if err != nil {
		return err
	}
	if err := f.checkOutput(); err != nil {
		return err
	}
	if err := f.cat.check(ctx); err != nil {
		return err
	}
	runs := time.Duration(0)
	if !w.Info().FixedWork {
		runs = f.Rampup + f.Duration
	}
	actions, err := f.kill.action(ctx, runs, url)
	if err != nil {
		return err
	}
	f.Actions = actions
	if err := runner.CheckSplit(w, f.Options); err != nil {
		return err
	}
	metrics, err := serveMetrics(f.metricsAddr, stderr)
	if err != nil {
		return err
	}
	if metrics != nil {
		defer metrics.Close()
	}
	t, err := openTarget(ctx, w, url)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := runner.Isolate(t, f.Options); err != nil {
		return err
	}
	if !f.Split.Part.Whole() {
		if err := parts.Check(t.Dialect()); err != nil {
			return err
		}
		// Every part's sessions are the run's: none counts as another
		// client's in the marking part's telemetry.
		dbtarget.NameSessions(t, dbtarget.RunName(f.Split.Name))
	}
	r, err := openRun(ctx, w, t, url == DefaultTarget, stderr)
	if err != nil {
		return err
	}
	defer r.Close()
	acks, err := f.recordAcks(w, r)
	if err != nil {
		return err
	}
	if acks != nil {
		defer acks.Discard()
	}
	audited := w
	if len(with) > 0 {
		groups, err := withGroups(ctx, t, with)
		for _, g := range groups {
			defer g.Run.Close()
		}
		if err != nil {
			return err
		}
		mixed := workload.NewMixed(append([]workload.Group{{W: w, Run: r, VUs: f.VUs}}, groups...))
		w, r, f.VUs = mixed, mixed, mixed.VUs()
	}
	if err := workload.CheckVUs(r, f.VUs); err != nil {
		return err
	}
	if err := runner.CheckPooled(r, f.Connections); err != nil {
		return err
	}
	if err := runner.CheckMemory(r, f.Options); err != nil {
		return err
	}
	if err := runner.CheckPlacement(t, r, f.Options); err != nil {
		return err
	}
	o := f.Options
	if metrics != nil {
		o.Live = metrics.Follow(w.Info(), r, nil)
	}
	doc, err := drive(ctx, t, w, r, o, stderr)
	if err != nil {
		return err
	}
	path := f.jsonPath
	if path == "" {
		path = defaultPath(f.resultsDir, doc)
	}
	doc.ErrorRate = result.HoldErrors(doc, float64(f.maxErrors))
	if err := f.keep(hard, doc, path, acks, audited, t, thresholds, stdout, stderr); err != nil {
		return err
	}
	return outcome(doc)
}

// check reads --with, whose virtual users run beside the workload's, and
// checks the options.
func (f *runFlags) check(w workload.Workload) ([]withSpec, error) {
	if c, ok := w.(workload.RunChecker); ok {
		if err := c.CheckRun(); err != nil {
			return nil, err
		}
	}
	with, err := parseWith(f.with)
	if err != nil {
		return nil, err
	}
	for _, g := range with {
		f.Beside += g.vus
	}
	if f.part != "" {
		if f.Split.Part, err = parts.ParseSpec(f.part); err != nil {
			return nil, err
		}
		if f.audit {
			return nil, exitcode.Userf("--audit-durability does not run in parts yet: run it in one process")
		}
	}
	return with, f.Validate(w.Info().FixedWork)
}

// openTarget opens the run's target. Only the default target, which
// builds itself (openRun), or a workload with nothing to build may create
// a database here; otherwise a typing error in a path would leave an
// empty file behind.
func openTarget(ctx context.Context, w workload.Workload, url string) (dbtarget.Target, error) {
	open := dbtarget.OpenExisting
	if _, builds := w.(workload.Builder); url == DefaultTarget || !builds {
		open = openCreating
	}
	return open(ctx, url)
}

// openRun opens w on t. On the default target (zero setup) a workload
// without its schema builds the smallest one first.
func openRun(ctx context.Context, w workload.Workload, t dbtarget.Target, isDefault bool, stderr io.Writer) (workload.Run, error) {
	r, err := w.Open(ctx, t)
	if b, ok := w.(workload.Builder); ok && errors.Is(err, workload.ErrNoSchema) && isDefault {
		fmt.Fprintf(stderr, "No %s schema on the default target yet: building the smallest one first.\n", w.Name())
		if err = build(ctx, w.Name(), b, t, false, stderr, stderr); err == nil {
			r, err = w.Open(ctx, t)
		}
	}
	if errors.Is(err, workload.ErrNoSchema) {
		return nil, noSchema(w, t)
	}
	return r, err
}

// recordAcks starts the acknowledgement log of --audit-durability, beside
// where the result goes; nil without it.
func (f *runFlags) recordAcks(w workload.Workload, r workload.Run) (*runner.AckLog, error) {
	if !f.audit {
		return nil, nil
	}
	dir := f.resultsDir
	if f.jsonPath != "" {
		dir = filepath.Dir(f.jsonPath)
	}
	return runner.RecordAcks(w, r, dir)
}

// drive runs r with o, its progress and notes on stderr.
func drive(ctx context.Context, t dbtarget.Target, w workload.Workload, r workload.Run, o runner.Options, stderr io.Writer) (*result.Document, error) {
	p := newProgress(stderr)
	if w.Info().FixedWork {
		fmt.Fprintf(stderr, "Running %s on %s\n", w.Name(), t.URL())
	} else {
		p := o.Split.Part
		vus := fmt.Sprintf("%d VUs", p.Share(o.VUs))
		if o.Connections > 0 {
			vus = fmt.Sprintf("%d VUs on %s", p.Share(o.VUs), human.Count(p.Share(o.Connections), "session"))
		}
		if !p.Whole() {
			vus = fmt.Sprintf("part %d of %d, %s of the run's %d", p.Index, p.Of, vus, o.VUs)
		}
		fmt.Fprintf(stderr, "Running %s on %s: %s, %s ramp-up, %s measured\n",
			w.Name(), t.URL(), vus, o.Rampup, o.Duration)
	}
	o.Progress = p.update
	o.Warn = func(msg string) { fmt.Fprintln(stderr, "dbrig: "+msg) }
	doc, err := runner.Run(ctx, t, w, r, o)
	p.done()
	return doc, err
}

// keep audits the acknowledgements audited's run logged in acks, if any,
// within ctx, judges the thresholds ts (lost_acks on the audit's
// finding), writes the document to path, or where it can, and prints its
// summary whatever happened to the file; outcome then says how a kept run
// ends.
func (f *runFlags) keep(ctx context.Context, doc *result.Document, path string, acks *runner.AckLog, audited workload.Workload, t dbtarget.Target, ts []result.Threshold, stdout, stderr io.Writer) error {
	// A failed audit still leaves the run's document, and its log for
	// dbrig audit durability to try again. A run that Ctrl-C ended is
	// audited all the same; a second Ctrl-C cuts the audit short.
	var log string
	var logErr, auditErr error
	if acks != nil {
		log, logErr = acks.Keep(path)
		if logErr == nil && doc.ServerLost == nil {
			doc.Durability, auditErr = runner.AuditDurability(ctx, audited, t, log, stderr)
		}
	}
	doc.Thresholds = f.judgeThresholds(ts, doc)
	written, err := writeResult(path, doc, log)
	report.Text(stdout, doc)
	if written != "" {
		fmt.Fprintf(stdout, "\nResult: %s\n", written)
		f.cat.record(context.WithoutCancel(ctx), stdout, stderr, written)
	}
	if log != "" && written != "" && written != path {
		log = runner.AckLogPath(written) // writeResult took it along
	}
	switch {
	case logErr != nil:
		fmt.Fprintf(stderr, "dbrig: no durability audit: %v; what the log holds is kept at %s\n", human.OneLine(logErr), log)
	case acks != nil && doc.ServerLost != nil && written != "":
		fmt.Fprintf(stderr, "dbrig: no durability audit: the server was lost; once it is back: dbrig audit durability %s\n", written)
	}
	if err != nil && auditErr != nil {
		return fmt.Errorf("%v; %v", err, human.OneLine(auditErr))
	}
	return cmp.Or(err, auditErr)
}

// withSpec is one --with: a workload to run beside the main one.
type withSpec struct {
	arg, name string
	vus       int
}

// parseWith reads the --with arguments, WORKLOAD:VUS each.
func parseWith(args []string) ([]withSpec, error) {
	var out []withSpec
	for _, a := range args {
		name, n, ok := strings.Cut(a, ":")
		vus, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, exitcode.Userf("--with %q: want WORKLOAD:VUS, such as dvd-reports:2", a)
		}
		out = append(out, withSpec{a, name, vus})
	}
	return out, nil
}

// withGroups opens the workloads --with names on t, each with its own
// virtual users and its default options.
func withGroups(ctx context.Context, t dbtarget.Target, with []withSpec) ([]workload.Group, error) {
	var groups []workload.Group
	for _, w := range with {
		g, err := workload.OpenGroup(ctx, t, w.name, w.vus)
		if err != nil {
			return groups, fmt.Errorf("--with %s: %w", w.arg, err)
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// addPartFlags adds the flags that make the run one part of a run split
// across processes or hosts.
func addPartFlags(fs *pflag.FlagSet, f *runFlags) {
	fs.StringVar(&f.part, "part", "", "run part I of N of the run (I/N): the parts meet in the target database, run the same window, and dbrig merge makes one document of theirs")
	fs.StringVar(&f.Split.Name, "part-run", parts.DefaultName, "the name the parts of one run meet under, so that two split runs on one database do not meet")
	fs.DurationVar(&f.Split.Timeout, "part-timeout", parts.DefaultTimeout, "how long the parts wait for each other before every one fails, and nothing runs")
}
