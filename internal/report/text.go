// Package report turns result documents into something to read.
package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dbrig/dbrig/internal/result"
)

// Text writes the end-of-run summary: a table per transaction type, then
// the workload's headline lines and its mix audit.
func Text(w io.Writer, d *result.Document) {
	if d.Interrupted {
		fmt.Fprintf(w, "Interrupted: the figures cover the %.1f s measured before the stop.\n", d.WindowSeconds)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transaction\tcount\tper min\terrors\tretries\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tmax ms\t")
	for _, t := range d.Transactions {
		l := t.Latency
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n",
			t.Name, t.Count, t.PerMinute, t.Errors, t.Retries, l.P50, l.P90, l.P95, l.P99, l.Max)
	}
	tw.Flush()
	for _, t := range d.Transactions {
		if t.ErrorSample != "" {
			fmt.Fprintf(w, "  %s error: %s\n", t.Name, t.ErrorSample)
		}
	}
	fmt.Fprintln(w)
	for _, l := range d.Lines {
		fmt.Fprintln(w, l)
	}
	if len(d.Audit) > 0 {
		fmt.Fprintln(w, "Mix audit (TPC-C 9.2):")
		for _, a := range d.Audit {
			fmt.Fprintf(w, "  %-4s %-26s %6.2f%%  (%.2f-%.2f%%)", a.Result, a.Name, a.Value, a.Low, a.High)
			if a.Reason != "" {
				fmt.Fprintf(w, "  %s", a.Reason)
			}
			fmt.Fprintln(w)
		}
	}
}
