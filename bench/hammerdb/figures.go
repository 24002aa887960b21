//go:build unix

package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
)

// Figures is what --json writes.
type Figures struct {
	harness.ServerFigures
	Warehouses int    `json:"warehouses"`
	VUs        int    `json:"vus"`
	Rampup     string `json:"rampup"`
	Duration   string `json:"duration"`
	// Warmup is the unmeasured run of each tool before the pairs; "" for none.
	Warmup string `json:"warmup,omitempty"`
	Pairs  []Pair `json:"pairs"`
	// The medians over the pairs of the dbrig/HammerDB ratios.
	MedianNOPMRatio float64 `json:"median_nopm_ratio"`
	MedianCPURatio  float64 `json:"median_server_cpu_ratio"`
}

// Pair is one run of each tool, First first.
type Pair struct {
	N        int    `json:"pair"`
	First    string `json:"first"`
	Dbrig    Run    `json:"dbrig"`
	HammerDB Run    `json:"hammerdb"`
	// NOPMRatio is dbrig's database NOPM over HammerDB's; CPURatio
	// dbrig's server CPU per New-Order over HammerDB's.
	NOPMRatio float64 `json:"nopm_ratio"`
	CPURatio  float64 `json:"server_cpu_ratio"`
}

// Run is one tool's run, its figures over its measured window.
type Run struct {
	Tool    string    `json:"tool"`
	Started time.Time `json:"started"`
	// WindowFrom says how the window was found: "run" (dbrig's own),
	// "log" (HammerDB's log lines) or "clock".
	WindowFrom    string  `json:"window_from"`
	WindowSeconds float64 `json:"window_seconds"`
	// NOPMTool is the tool's own figure: dbrig's client count,
	// HammerDB's printed TEST RESULT. NOPMDB is from sum(d_next_o_id).
	NOPMTool  float64 `json:"nopm_tool"`
	NOPMDB    float64 `json:"nopm_db"`
	NewOrders int64   `json:"new_orders"`
	// ServerCPUSeconds is the postmaster's process tree's user + system
	// time over the window.
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	ServerMsPerNO    float64 `json:"server_ms_per_new_order"`
	// Autoanalyze is each table's last_autoanalyze after the run;
	// AnalyzedDuring those that fell after the run began, which can
	// change a plan under it.
	Autoanalyze    map[string]*time.Time `json:"last_autoanalyze"`
	AnalyzedDuring []string              `json:"analyzed_during,omitempty"`
}

func (p *Pair) ratios() {
	if p.HammerDB.NOPMDB > 0 {
		p.NOPMRatio = p.Dbrig.NOPMDB / p.HammerDB.NOPMDB
	}
	if p.HammerDB.ServerMsPerNO > 0 {
		p.CPURatio = p.Dbrig.ServerMsPerNO / p.HammerDB.ServerMsPerNO
	}
}

func (f *Figures) summarize() {
	var nopm, cpu []float64
	for _, p := range f.Pairs {
		nopm, cpu = append(nopm, p.NOPMRatio), append(cpu, p.CPURatio)
	}
	f.MedianNOPMRatio, f.MedianCPURatio = median(nopm), median(cpu)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// printPair prints a pair's table: each tool's figures, then the ratios.
func printPair(w io.Writer, p Pair) {
	fmt.Fprintf(w, "\n== Pair %d (%s first)\n", p.N, p.First)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "tool\tNOPM (its own)\tNOPM (database)\tserver CPU ms per New-Order\twindow\tautoanalyzed during the run")
	for _, r := range []Run{p.Dbrig, p.HammerDB} {
		during := strings.Join(r.AnalyzedDuring, ", ")
		if during == "" {
			during = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.0f s (%s)\t%s\n", r.Tool, human.Thousands(r.NOPMTool), human.Thousands(r.NOPMDB),
			r.ServerMsPerNO, r.WindowSeconds, r.WindowFrom, during)
	}
	fmt.Fprintf(tw, "dbrig / HammerDB\t\t%.2fx\t%.2fx\t\t\n", p.NOPMRatio, p.CPURatio)
	tw.Flush()
}

// printSummary prints the medians, judged against the targets.
func printSummary(w io.Writer, f *Figures) {
	judge := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintf(w, "\n== dbrig / HammerDB 4.12, medians over %d pairs: %d warehouses, %d VUs, %s ramp-up, %s measured, %s\n",
		len(f.Pairs), f.Warehouses, f.VUs, f.Rampup, f.Duration, human.FirstLine(f.ServerVersion))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tmedian\tgoal\tverdict")
	fmt.Fprintf(tw, "NOPM (database)\t%.2fx\t≥ %.2fx\t%s\n", f.MedianNOPMRatio, targetNOPM, judge(f.MedianNOPMRatio >= targetNOPM))
	fmt.Fprintf(tw, "server CPU per New-Order\t%.2fx\t≤ %.2fx\t%s\n", f.MedianCPURatio, targetCPU, judge(f.MedianCPURatio <= targetCPU))
	tw.Flush()
	fmt.Fprintln(w, harness.SettingsLine(f.Settings)+" (both clusters)")
	warm := "no warm-up"
	if f.Warmup != "" {
		warm = "an unmeasured " + f.Warmup + " run of each tool before the pairs"
	}
	fmt.Fprintf(w, "dbrig in procs mode; HammerDB with pg_storedprocs false; %s; a CHECKPOINT before each run; each tool on a cluster of its own\n", warm)
}
