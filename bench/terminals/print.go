//go:build unix

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"

	"github.com/dbrig/dbrig/bench/internal/harness"
	"github.com/dbrig/dbrig/internal/human"
)

func thousands(n int) string { return human.Thousands(float64(n)) }

func mb(b int64) float64 { return float64(b) / 1e6 }

// off is a's difference from b, in percent.
func off(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return (a/b - 1) * 100
}

// print says a point's figures as it ends.
func (p *Point) print() {
	w := os.Stdout
	fmt.Fprintf(w, "dbrig peak RSS: %.1f MB, %.1f KB a terminal\n", mb(p.PeakRSS), p.perTerminalKB())
	if r := p.RSSWindow; len(r) == 5 {
		fmt.Fprintf(w, "RSS in the window, at its start, quarters and end: %.1f, %.1f, %.1f, %.1f, %.1f MB (%+.1f%%)\n",
			mb(r[0]), mb(r[1]), mb(r[2]), mb(r[3]), mb(r[4]), off(float64(r[4]), float64(r[0])))
	}
	fmt.Fprintf(w, "Client CPU: %.3f cores over the run (%.1f s in %.1f s), %.3f over the window\n",
		p.Cores, p.CPUSeconds, p.WallSeconds, p.WindowCores)
	fmt.Fprintf(w, "Server sessions: at most %d client backends at once (1 Hz pg_stat_activity), %d opened (pg_stat_database.sessions)\n",
		p.ServerSessionsMax, p.SessionsOpened)
	fmt.Fprintf(w, "Efficiency %.1f%%; NOPM db %s, client %s (%+.2f%%); TPM db %s, client %s (%+.2f%%); errors %d\n",
		p.Efficiency, human.Thousands(p.NOPMDB), human.Thousands(p.NOPMClient), off(p.NOPMClient, p.NOPMDB),
		human.Thousands(p.TPMDB), human.Thousands(p.TPMClient), off(p.TPMClient, p.TPMDB), p.Errors)
	fmt.Fprintf(w, "p90: New-Order %.1f ms, wait for a session %.1f ms\n", p.NewOrderP90, p.WaitP90)
	fmt.Fprintf(w, "Load average: %s before, %s after (the machine is shared)\n", p.LoadBefore, p.LoadAfter)
	if p.Verdict != "" {
		fmt.Fprintln(w, p.Verdict)
	}
}

// via is how the point's terminals reached the database: through
// pgbouncer, in parts, or directly ("").
func (p *Point) via() string {
	if len(p.Parts) > 0 {
		return fmt.Sprintf("%d parts", len(p.Parts))
	}
	return p.Through
}

// perTerminalKB is the peak RSS a terminal, of the process with the most:
// in a run in parts, the largest part's over its share of the terminals.
func (p *Point) perTerminalKB() float64 {
	return float64(p.PeakRSS) / 1e3 / float64(p.Terminals) * float64(max(len(p.Parts), 1))
}

// rssAt is the window's RSS at quarter q, 0 without samples.
func (p *Point) rssAt(q int) int64 {
	if q >= len(p.RSSWindow) {
		return 0
	}
	return p.RSSWindow[q]
}

// goal is one of issue 22's acceptance figures, for the shape it names.
type goal struct {
	shape shape
	name  string
	met   func(p Point) bool
}

// goals are issue 22's acceptance figures.
var goals = []goal{
	{shape{2000, 20, 10}, "peak RSS ≤ 130 MB", func(p Point) bool { return p.PeakRSS <= 130e6 }},
	{shape{2000, 20, 10}, "≤ 23 server sessions", func(p Point) bool { return p.ServerSessionsMax <= 23 }},
	{shape{2000, 20, 10}, "efficiency 90-110%", efficient},
	{shape{2000, 20, 10}, "NOPM and TPM, db and client within 1%", agree},
	{shape{10000, 100, 50}, "peak RSS ≤ 500 MB", func(p Point) bool { return p.PeakRSS <= 500e6 }},
	{shape{10000, 100, 50}, "client CPU ≤ 0.2 core", func(p Point) bool { return p.Cores <= 0.2 }},
	{shape{10000, 100, 50}, "efficiency 90-110%", efficient},
}

func efficient(p Point) bool { return p.Efficiency >= 90 && p.Efficiency <= 110 }

func agree(p Point) bool {
	return math.Abs(off(p.NOPMClient, p.NOPMDB)) <= 1 && math.Abs(off(p.TPMClient, p.TPMDB)) <= 1
}

// printTable prints every point in a table, then the acceptance goals of
// those points that have their shape.
func printTable(w io.Writer, f *Figures) {
	fmt.Fprintf(w, "== Figures: keyed tproc-c, %d terminals a warehouse, %s, %s\n", perWarehouse, f.Connection, human.FirstLine(f.ServerVersion))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "terminals\tsessions\twh\tvia\tpeak RSS MB\tKB/term\tRSS start→end MB\tcores run\tcores window\tserver sessions\topened\teff %\tNOPM db\tNOPM client\tTPM db\tTPM client\tNO p90 ms\twait p90 ms\tload after\t")
	for _, p := range f.Points {
		if p.Failed != "" {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\tfailed\t\n", p.Terminals, p.Sessions, p.Warehouses, p.Through)
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%.1f\t%.1f\t%.1f→%.1f\t%.3f\t%.3f\t%d\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%s\t\n",
			p.Terminals, p.Sessions, p.Warehouses, p.via(), mb(p.PeakRSS), p.perTerminalKB(),
			mb(p.rssAt(0)), mb(p.rssAt(4)), p.Cores, p.WindowCores, p.ServerSessionsMax, p.SessionsOpened, p.Efficiency,
			p.NOPMDB, p.NOPMClient, p.TPMDB, p.TPMClient, p.NewOrderP90, p.WaitP90, p.LoadAfter)
	}
	tw.Flush()
	for _, p := range f.Points {
		if p.Failed != "" {
			fmt.Fprintf(w, "Failed: %s terminals through %s: %s\n", thousands(p.Terminals), p.Through, p.Failed)
		}
	}
	printGoals(w, f.Points)
	fmt.Fprintln(w, harness.SettingsLine(f.Settings))
}

// printGoals judges the points that have an acceptance goal's shape.
func printGoals(w io.Writer, points []Point) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := false
	for _, g := range goals {
		for _, p := range points {
			if p.Failed != "" || p.Through != "" || (shape{p.Terminals, p.Sessions, p.Warehouses}) != g.shape {
				continue
			}
			if !header {
				fmt.Fprintln(tw, "\nacceptance (issue 22)\tgoal\tverdict")
				header = true
			}
			verdict := "met"
			if !g.met(p) {
				verdict = "MISSED"
			}
			fmt.Fprintf(tw, "%s terminals on %d sessions, %d warehouses\t%s\t%s\n", thousands(p.Terminals), p.Sessions, p.Warehouses, g.name, verdict)
		}
	}
	tw.Flush()
}
