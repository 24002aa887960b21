// Package report turns result documents into something to read.
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// Text writes the end-of-run summary: a table per transaction type, the
// workload's metrics, its own lines and its audit, and the telemetry's
// run in one line.
func Text(w io.Writer, d *result.Document) {
	if l := errorRateLine(d); l != "" {
		fmt.Fprintln(w, l)
	}
	if d.Interrupted {
		fmt.Fprintf(w, "Interrupted: the figures cover the %.1f s measured before the stop.\n", d.WindowSeconds)
	}
	if l := lostLine(d); l != "" {
		fmt.Fprintln(w, l)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	doubt := inDoubt(d) > 0
	fmt.Fprint(tw, "transaction\tcount\tper min\terrors\t")
	if doubt {
		fmt.Fprint(tw, "in doubt\t")
	}
	retried := result.Retried(d)
	fmt.Fprint(tw, "retries\t")
	if retried {
		fmt.Fprint(tw, "aborts\tretrying %\t")
	}
	fmt.Fprintln(tw, "p50 ms\tp90 ms\tp95 ms\tp99 ms\tmax ms\t")
	for _, t := range d.Transactions {
		l := t.Latency
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t", t.Name, t.Count, t.PerMinute, t.Errors)
		if doubt {
			fmt.Fprintf(tw, "%d\t", t.InDoubt)
		}
		fmt.Fprintf(tw, "%d\t", t.Retries)
		if retried {
			fmt.Fprintf(tw, "%d\t%.1f\t", t.Aborts, 100*t.RetryShare())
		}
		fmt.Fprintf(tw, "%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", l.P50, l.P90, l.P95, l.P99, l.Max)
	}
	tw.Flush()
	for _, t := range d.Transactions {
		if t.ErrorSample != "" {
			fmt.Fprintf(w, "  %s error: %s\n", t.Name, t.ErrorSample)
		}
	}
	if s := d.Sessions; s != nil {
		fmt.Fprintln(w, sessionsLine(s))
	}
	if p := d.Placement; p != nil {
		fmt.Fprintln(w, p.Line())
	}
	fmt.Fprintln(w)
	Metrics(w, d)
	for _, l := range d.Lines {
		fmt.Fprintln(w, l)
	}
	if l := steadyLine(d); l != "" {
		fmt.Fprintln(w, l)
	}
	if v := result.VerdictOf(d); v != nil {
		fmt.Fprintln(w, v.Line())
	}
	if len(d.Audit) > 0 {
		fmt.Fprintln(w, auditHead(d.Audit)+":")
		for _, a := range d.Audit {
			fmt.Fprintf(w, "  %-4s %-26s %6.2f%%  (%.2f-%.2f%%)", a.Result, a.Name, a.Value, a.Low, a.High)
			if a.Reason != "" {
				fmt.Fprintf(w, "  %s", a.Reason)
			}
			fmt.Fprintln(w)
		}
	}
	thresholdsText(w, d)
	for _, l := range reliabilityLines(d) {
		fmt.Fprintln(w, l)
	}
	if d.Telemetry != nil {
		if s := telemetry.Summarize(d.Telemetry); s.DB != nil {
			oneLine(d, s).text(w)
		}
	}
}

// sessionsLine says how a pooled run's terminals shared its sessions;
// the verdict of a pool too small is among the document's notes.
func sessionsLine(s *result.Sessions) string {
	return fmt.Sprintf("Sessions: %d shared by %d terminals; in use p95 %d, max %d; wait for a session p90 %.1f ms",
		s.Sessions, s.Terminals, s.InUseP95, s.InUseMax, s.Wait.P90)
}

// Metrics writes the run's metrics, a line each: both sides where the
// database keeps a counter, the primary metric first and marked.
func Metrics(w io.Writer, d *result.Document) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tdatabase\tclient\tunit\t")
	for _, m := range ordered(d) {
		label := m.Label
		if m.Key == d.PrimaryMetric {
			label += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", label, fmtOptional(m.DB), fmtOptional(m.Client), m.Unit)
	}
	tw.Flush()
	fmt.Fprintln(w, "* the primary metric")
}

// fmtOptional is a side of a metric, "—" where it was not measured.
func fmtOptional(p *float64) string { return fmtValue(optional(p)) }

// ordered is the run's metrics with the primary one first.
func ordered(d *result.Document) []result.Metric {
	out := make([]result.Metric, 0, len(d.Metrics))
	for _, m := range d.Metrics {
		if m.Key == d.PrimaryMetric {
			out = append([]result.Metric{m}, out...)
		} else {
			out = append(out, m)
		}
	}
	return out
}

// PlainText writes a run's or a sweep's report as text: every section of
// the HTML page, its tables and notes, without the charts.
func PlainText(w io.Writer, d *Doc) {
	p := runOrSweepPage(d)
	fmt.Fprintln(w, p.Title)
	for _, s := range p.Subtitle {
		fmt.Fprintln(w, s)
	}
	for _, s := range p.Stats {
		fmt.Fprintf(w, "%s: %s\n", s.Label, s.Value)
	}
	for _, b := range p.Blocks {
		b.text(w)
	}
}

func (b block) text(w io.Writer) {
	if len(b.Notes) == 0 && b.Pre == "" && len(b.KV) == 0 && b.Table == nil {
		return
	}
	fmt.Fprintf(w, "\n%s\n%s\n", b.Heading, strings.Repeat("=", len([]rune(b.Heading))))
	for _, n := range b.Notes {
		fmt.Fprintln(w, "- "+n)
	}
	if b.Pre != "" {
		fmt.Fprintln(w, b.Pre)
	}
	for _, g := range b.KV {
		fmt.Fprintf(w, "%s:\n", g.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, r := range g.Rows {
			fmt.Fprintf(tw, "  %s\t%s\n", r[0], r[1])
		}
		tw.Flush()
	}
	if t := b.Table; t != nil {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		line := func(cells []cell) {
			for _, c := range cells {
				fmt.Fprint(tw, c.Text+"\t")
			}
			fmt.Fprintln(tw)
		}
		line(t.Head)
		for _, r := range t.Rows {
			line(r.Cells)
		}
		tw.Flush()
		if t.Caption != "" {
			fmt.Fprintln(w, t.Caption)
		}
	}
}
