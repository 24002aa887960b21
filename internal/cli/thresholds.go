package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/experiment"
	"github.com/dbrig/dbrig/internal/report"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
)

// addThresholdFlags adds --threshold, which run checks its window
// against, and --thresholds-on-interrupt.
func addThresholdFlags(fs *pflag.FlagSet, f *runFlags, info workload.Info) {
	fs.StringArrayVar(&f.thresholds, "threshold", nil, "an expectation of the measured window, printed PASS or FAIL with the figure after the run; the exit code is 1 if one is missed (repeatable): "+result.ThresholdExample(info)+", errors<0.1%, "+info.Primary+">N (the side that stands for it: the database's, or the client's where the two disagree), "+info.Primary+".client>N, "+info.Primary+".db>N")
	fs.BoolVar(&f.thresholdsOnInterrupt, "thresholds-on-interrupt", false, "judge the thresholds on a window that Ctrl-C or SIGTERM cut short too (default false: each is printed SKIP, not judged)")
}

// judgeThresholds holds doc's window to the run's thresholds ts; an
// interrupted window only with --thresholds-on-interrupt.
func (f *runFlags) judgeThresholds(ts []result.Threshold, doc *result.Document) []result.ThresholdResult {
	if doc.Interrupted && !f.thresholdsOnInterrupt {
		return result.Unjudged(ts, "not judged: the run was interrupted; --thresholds-on-interrupt judges an interrupted window")
	}
	return result.Evaluate(ts, doc)
}

// thresholdLong tells what --threshold takes, in the names of a run that
// declares info.
func thresholdLong(info workload.Info) string {
	tx := info.PrimaryTx
	if tx == "" {
		tx = "TYPE"
	}
	with := ""
	if !info.FixedWork {
		with = `
The names of workloads run --with carry their prefix, as in the result
(dvd-reports:category_sales.p95<2s).`
	}
	return `

--threshold holds the measured window to an expectation, as k6's thresholds
do: a metric the workload declares, in its own unit (` + info.Primary + `>N), the
failed transactions (errors<0.1% of all, or errors<10), those in doubt,
whose commit was sent and never answered (in_doubt<1, or a share), or a
transaction type's latency, TYPE.STAT with STAT one of p50 p90 p95 p99
p99.9 max avg in us, ms or s (` + result.ThresholdExample(info) + `), or its errors
(` + tx + `.errors<1%) or in doubt (` + tx + `.in_doubt<1).` + with + `
A metric alone judges the figure that stands for it, as the summary's
headline does: by default the database's own, but the client's where the
two disagree beyond their tolerance (the database counts every client's
work, the client only the run's); ` + info.Primary + `.client>N judges the client's
figure, ` + info.Primary + `.db>N the database's. Operators: < <= > >=. Each is
printed PASS or FAIL with what was measured (of a metric, with the side
it judged) and kept in the result, and one missed makes the exit code 1;
a name, operator or unit not known is refused in one line before
anything runs, exit code 2. A window that Ctrl-C or SIGTERM cut short is
not the run's: its thresholds are printed SKIP, not judged, unless
--thresholds-on-interrupt asks for them, and the exit code is 4.`
}

// parseThresholds reads --threshold against what the run of w, with the
// workloads of --with, declares: their metrics and transaction types.
func (f *runFlags) parseThresholds(w workload.Workload, with []withSpec) ([]result.Threshold, error) {
	if len(f.thresholds) == 0 {
		return nil, nil
	}
	if f.part != "" {
		return nil, exitcode.Userf("--threshold does not apply to --part: a part measures a share of the run")
	}
	ws := []workload.Workload{w}
	for _, g := range with {
		// An unknown one is refused as the run opens it.
		if o, ok := workload.New(g.name); ok {
			ws = append(ws, o)
		}
	}
	ts, err := result.ParseThresholds(f.thresholds, workload.MixInfo(ws), workload.MixTxTypes(ws))
	for _, t := range ts {
		if t.What == result.LostAcksKey && !f.audit {
			return nil, exitcode.Userf("threshold %q judges the durability audit: add --audit-durability", t.Expr)
		}
	}
	return ts, err
}

// sweepThresholds writes the verdicts on the sweep's thresholds: every
// run's met, or each one missed with its point, repetition and figure.
// A miss fails the sweep, once everything is saved.
func sweepThresholds(w io.Writer, sw *experiment.Sweep) error {
	if len(sw.Spec.Thresholds) == 0 {
		return nil
	}
	var missed []string
	runs, failed := 0, 0
	for i, pt := range sw.Doc.Points {
		for rep, rs := range pt.Thresholds {
			if rs == nil {
				continue
			}
			runs++
			if result.Missed(rs) > 0 {
				failed++
			}
			for _, r := range rs {
				if !r.Met && !r.Unjudged {
					missed = append(missed, fmt.Sprintf("  point %d (%s), repetition %d: %s", i+1, sw.Spec.Label(sw.Points[i]), rep+1, report.ThresholdLine(r)))
				}
			}
		}
	}
	if len(missed) == 0 {
		fmt.Fprintf(w, "Thresholds: all %d met in %s\n", len(sw.Spec.Thresholds), plural(runs, "run"))
		return nil
	}
	fmt.Fprintf(w, "Thresholds: %s missed, in %d of %s:\n%s\n", plural(len(missed), "time"), failed, plural(runs, "run"), strings.Join(missed, "\n"))
	return &failure{}
}
