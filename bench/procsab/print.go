//go:build unix

package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
)

// Figures is what --json writes.
type Figures struct {
	harness.ServerFigures
	A          string `json:"a"`
	B          string `json:"b"`
	Warehouses int    `json:"warehouses"`
	VUs        int    `json:"vus"`
	Rampup     string `json:"rampup"`
	Duration   string `json:"duration"`
	// Built is whether each side's database was built by its own dbrig.
	Built bool         `json:"built_per_side"`
	Runs  []RunFigures `json:"runs"`
}

// pairs returns the runs as pairs, A's first.
func (f *Figures) pairs() [][2]RunFigures {
	var out [][2]RunFigures
	for i := 0; i+1 < len(f.Runs); i += 2 {
		out = append(out, [2]RunFigures{f.Runs[i], f.Runs[i+1]})
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// print writes the table of pairs, the medians, and each function's
// time per call when it was read.
func (f *Figures) print(w io.Writer) {
	fmt.Fprintf(w, "== A/B: A = %s, B = %s; %d warehouses, %d VUs procs mode, %s ramp-up, %s measured, %s\n",
		f.A, f.B, f.Warehouses, f.VUs, f.Rampup, f.Duration, human.FirstLine(f.ServerVersion))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pair\tA ms/NO\tB ms/NO\tB/A CPU\tA WAL/NO\tB WAL/NO\tB/A WAL\tA NOPM\tB NOPM\tB/A NOPM\trollbacks A, B\tnotes")
	var cpu, wal, nopm []float64
	for i, p := range f.pairs() {
		a, b := p[0], p[1]
		cpu, wal, nopm = append(cpu, b.ServerMillisPerNO/a.ServerMillisPerNO), append(wal, b.WALPerNO/a.WALPerNO), append(nopm, b.NOPM/a.NOPM)
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%s\t%s\t%.3f\t%s\t%s\t%.3f\t%.2f%%, %.2f%%\t%s\n", i+1,
			a.ServerMillisPerNO, b.ServerMillisPerNO, cpu[i], human.Thousands(a.WALPerNO), human.Thousands(b.WALPerNO), wal[i],
			human.Thousands(a.NOPM), human.Thousands(b.NOPM), nopm[i], a.Rollbacks, b.Rollbacks, notes(a, b))
	}
	if len(cpu) > 0 {
		fmt.Fprintf(tw, "median\t\t\t%.3f\t\t\t%.3f\t\t\t%.3f\t\t\n", median(cpu), median(wal), median(nopm))
	}
	tw.Flush()
	fmt.Fprintln(w, harness.SettingsLine(f.Settings))
	built := "one database built once"
	if f.Built {
		built = "each side's database built by its own dbrig"
	}
	fmt.Fprintf(w, "%s; each run on a fresh copy of it as built\n", built)
	fmt.Fprintln(w, "ms/NO: the server's process tree's CPU over the measured window per New-Order; WAL/NO the cluster's WAL bytes over it (pg_stat_wal); both from each run's telemetry; NOPM the database's count")
	f.printPerCall(w)
}

// notes names what went wrong in a pair: errors, failed audit items.
func notes(runs ...RunFigures) string {
	var out []string
	for i, r := range runs {
		side := "AB"[i : i+1]
		if r.Errors > 0 {
			out = append(out, fmt.Sprintf("%s: %d errors", side, r.Errors))
		}
		if len(r.AuditFailed) > 0 {
			out = append(out, fmt.Sprintf("%s: audit failed %s", side, strings.Join(r.AuditFailed, ", ")))
		}
	}
	return strings.Join(out, "; ")
}

// printPerCall writes, per function, A's and B's mean µs per call in each
// pair and the median ratio.
func (f *Figures) printPerCall(w io.Writer) {
	names := map[string]bool{}
	for _, r := range f.Runs {
		for name := range r.MicrosPerCall {
			names[name] = true
		}
	}
	if len(names) == 0 {
		return
	}
	sorted := make([]string, 0, len(names))
	for name := range names {
		sorted = append(sorted, name)
	}
	sort.Strings(sorted)
	fmt.Fprintln(w, "\n== Mean execution time per call (pg_stat_statements, top level, ramp-up included), µs: A → B per pair")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "function\tpairs\tmedian B/A")
	for _, name := range sorted {
		var cells []string
		var ratios []float64
		for _, p := range f.pairs() {
			a, b := p[0].MicrosPerCall[name], p[1].MicrosPerCall[name]
			cells = append(cells, fmt.Sprintf("%.0f → %.0f", a, b))
			if a > 0 && b > 0 {
				ratios = append(ratios, b/a)
			}
		}
		med := "-"
		if len(ratios) > 0 {
			med = fmt.Sprintf("%.3f", median(ratios))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, strings.Join(cells, ", "), med)
	}
	tw.Flush()
}
