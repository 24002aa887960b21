package experiment

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

// measure does one run and files its document. An interrupted run's
// document is kept under its own name and counts for nothing; path is
// then "".
func (r *run) measure(ctx context.Context, pi, rep int, params []Param) (string, error) {
	w, opt, err := r.Spec.configure(params)
	if err != nil {
		return "", err
	}
	opened, err := w.Open(ctx, r.t)
	if err != nil {
		return "", err
	}
	defer opened.Close()
	a := audited{w: w}
	if r.Spec.Audits() {
		// In the sweep's runs/, to take the name of the run's document.
		if a.log, err = runner.RecordAcks(w, opened, filepath.Join(r.Dir, "runs")); err != nil {
			return "", err
		}
		defer a.log.Discard()
	}
	if len(r.Spec.With) > 0 {
		groups, err := r.openWith(ctx, workload.Group{W: w, Run: opened, VUs: opt.VUs})
		if err != nil {
			return "", err
		}
		defer closeRuns(groups[1:])
		mixed := workload.NewMixed(groups)
		w, opened, opt.VUs = mixed, mixed, mixed.VUs()
	}
	if r.srv != nil {
		if opt.Actions, err = runner.ClusterActions(r.srv, opt, r.build(r.Points[pi]).Dir); err != nil {
			return "", err
		}
	}
	// A cluster whose primary a run changed starts again, its lost node
	// made anew, before the next run.
	if len(opt.Actions) > 0 {
		defer func() { r.running = nil }()
	}
	opt.Progress, opt.Quit = r.o.Progress, r.o.Quit
	opt.Telemetry.Server = r.facts
	opt.Warn = func(msg string) { fmt.Fprintln(r.o.Log, "dbrig: "+msg) }
	if r.o.Live != nil {
		opt.Live = r.o.Live(w.Info(), opened, map[string]string{
			"point": strconv.Itoa(pi + 1), "params": r.Points[pi].Label(), "repetition": strconv.Itoa(rep),
		})
	}
	d, err := runner.Run(ctx, r.t, w, opened, opt)
	r.o.ProgressDone()
	if err != nil {
		return "", err
	}
	return r.file(ctx, pi, rep, d, a)
}

// audited is a run's acknowledgement log, nil where the run has none,
// and the workload that audits it.
type audited struct {
	log *runner.AckLog
	w   workload.Workload
}

// audit keeps the run's acknowledgement log beside its document at path,
// and looks up what it names on the target, which follows a cluster's
// primary: not after a run that lost its server or was interrupted,
// which does not count, and whose log stays for dbrig audit durability.
func (r *run) audit(ctx context.Context, d *result.Document, path string, a audited) error {
	if a.log == nil {
		return nil
	}
	log, err := a.log.Keep(path)
	if err != nil || d.ServerLost != nil || d.Interrupted {
		return err
	}
	d.Durability, err = runner.AuditDurability(ctx, a.w, r.t, log, r.o.Log)
	return err
}

// openWith opens the workloads the spec runs beside the sweep's, each
// with its virtual users, as groups after first. The caller closes their
// runs; a failure closes those opened so far.
func (r *run) openWith(ctx context.Context, first workload.Group) ([]workload.Group, error) {
	groups := []workload.Group{first}
	for _, g := range r.Spec.With {
		vus, _ := strconv.Atoi(g.Value) // checked with the spec
		og, err := workload.OpenGroup(ctx, r.t, g.Name, vus)
		if err != nil {
			closeRuns(groups[1:])
			return nil, err
		}
		groups = append(groups, og)
	}
	return groups, nil
}

// closeRuns closes the groups' runs, the last opened first.
func closeRuns(groups []workload.Group) {
	for i := len(groups) - 1; i >= 0; i-- {
		groups[i].Run.Close()
	}
}

// file audits the run as a says, writes its document under runs/ and
// counts it for its point, unless the run lost its server, failed past
// the error bound or was interrupted: then the document is kept under a
// name of its own and the path is "". A run whose audit failed is kept
// under its name, not counted, and stops the sweep.
func (r *run) file(ctx context.Context, pi, rep int, d *result.Document, a audited) (string, error) {
	doc := r.Doc
	name := fmt.Sprintf("p%02d-r%d", pi+1, rep)
	d.ErrorRate = result.HoldErrors(d, *r.o.MaxErrorPct)
	switch {
	case d.ServerLost != nil:
		name += "-lost"
	case d.Interrupted:
		name += "-interrupted"
	case d.ErrorRate.Exceeded:
		name += "-errors"
	}
	rel := filepath.Join("runs", name+".json")
	auditErr := r.audit(ctx, d, filepath.Join(r.Dir, rel), a)
	if d.Interrupted {
		d.Thresholds = result.Unjudged(r.Spec.Thresholds, "not judged: the run was interrupted, and does not count")
	} else {
		d.Thresholds = result.Evaluate(r.Spec.Thresholds, d)
	}
	if err := result.Write(filepath.Join(r.Dir, rel), d); err != nil {
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if d.ServerLost != nil {
		// Every run after it would fail the same way.
		return "", fmt.Errorf("run %d (point %d, repetition %d) lost its server %.1f s in: %s is kept but not counted; once the server is back, a resume runs it again",
			doc.Done+1, pi+1, rep, d.ServerLost.At, rel)
	}
	if d.Interrupted {
		r.addNote(fmt.Sprintf("run %d (point %d, repetition %d) was interrupted; %s is kept but not counted, and a resume runs it again",
			doc.Done+1, pi+1, rep, rel))
		return "", nil
	}
	if auditErr != nil {
		return "", fmt.Errorf("run %d (point %d, repetition %d): %w; %s is kept but not counted, and a resume runs it again",
			doc.Done+1, pi+1, rep, auditErr, rel)
	}
	if e := d.ErrorRate; e.Exceeded {
		// Its figures measured its failures, not the point; what failed it
		// (a full disk, a setting the server refuses) would most likely
		// fail every run after it.
		return "", fmt.Errorf("run %d (point %d, repetition %d) failed %.1f%% of its transactions (%d failed and %d in doubt of %d), over the bound of %g%% (--max-error-rate): %s is kept but not counted; a resume runs it again",
			doc.Done+1, pi+1, rep, e.Pct, e.Errors, e.InDoubt, e.Transactions, e.MaxPct, rel)
	}
	pt := &doc.Points[pi]
	pt.Runs[rep-1] = rel
	if r.Spec.BuildOf(r.Points[pi]) != "" {
		pt.ServerVersion = d.Target.Version
	}
	count(pt, d)
	r.faultLines(pi, rep, d)
	pointThresholds(pt, rep, d)
	if st := d.SteadyState(); st != nil {
		pt.Steady = append(pt.Steady, make([]*result.Steady, len(pt.Runs)-len(pt.Steady))...)
		pt.Steady[rep-1] = st
		fmt.Fprintf(r.o.Log, "point %d, repetition %d: %s\n", pi+1, rep, st.Line())
	}
	if v := result.VerdictOf(d); v != nil {
		pt.Verdicts = append(pt.Verdicts, make([]*result.Verdict, len(pt.Runs)-len(pt.Verdicts))...)
		pt.Verdicts[rep-1] = v
		fmt.Fprintf(r.o.Log, "point %d, repetition %d: limited by %s\n", pi+1, rep, v.Short())
	}
	doc.Done++
	result.Recompute(doc)
	return rel, r.save()
}

// faultLines logs what the faults in the run cost, and notes an outage
// that lasted to the window's end, whose length is then a lower bound,
// and an audit whose consistency check failed.
func (r *run) faultLines(pi, rep int, d *result.Document) {
	at := fmt.Sprintf("point %d, repetition %d", pi+1, rep)
	if o, ok := d.LongestOutage(); ok {
		line := fmt.Sprintf("%s: outage %.2f s", at, o.Outage.Seconds)
		if o.PerVU.Count > 0 {
			line += fmt.Sprintf("; per VU median %.2f s, max %.2f s", o.PerVU.Median, o.PerVU.Max)
		}
		fmt.Fprintln(r.o.Log, line)
		if o.ToEnd {
			r.addNote(at + ": no transaction completed after its outage began, which counts to the window's end: the point's outage is at least its mean")
		}
	}
	if du := d.Durability; du != nil {
		fmt.Fprintf(r.o.Log, "%s: durability audit: %s acknowledged, %s missing, %s in doubt\n", at,
			human.Thousands(float64(du.Acknowledged)), human.Thousands(float64(du.Missing)), human.Thousands(float64(du.InDoubt)))
		if du.Consistent != nil && !*du.Consistent {
			r.addNote(at + ": the workload's consistency check failed after the durability audit; its document says which condition")
		}
	}
}

// count adds the run's figures to its point's: every metric's value, the
// primary transaction's p95, the telemetry that explains them, and what
// the faults in it cost.
func count(pt *result.SweepPoint, d *result.Document) {
	pt.AddFaults(d)
	for _, m := range d.Metrics {
		// A metric neither side could measure (a cache miss on a database
		// that counts none) has no value to average.
		if v := m.Value(); !math.IsNaN(v) {
			pt.Values[m.Key] = append(pt.Values[m.Key], v)
		}
	}
	if p95, ok := primaryP95(d); ok {
		pt.P95 = append(pt.P95, p95)
	}
	if d.Telemetry == nil {
		return
	}
	sum := telemetry.Summarize(d.Telemetry)
	for _, e := range telemetry.Explains {
		if v, ok := e.Value(sum); ok {
			if pt.Telemetry == nil {
				pt.Telemetry = map[string][]float64{}
			}
			pt.Telemetry[e.Key] = append(pt.Telemetry[e.Key], v)
		}
	}
}

// primaryP95 is the p95 latency of the run's primary transaction, else,
// where the workload names none, of its first type; false where the run
// had no such transaction (a mode that times calls, not operations).
func primaryP95(d *result.Document) (float64, bool) {
	for _, tx := range d.Transactions {
		if tx.Name == d.PrimaryTx {
			return tx.Latency.P95, true
		}
	}
	if d.PrimaryTx == "" && len(d.Transactions) > 0 {
		return d.Transactions[0].Latency.P95, true
	}
	return 0, false
}
