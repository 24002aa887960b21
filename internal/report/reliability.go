package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
)

// missingShown is how many missing changes a report names; the document
// keeps more.
const missingShown = 10

// lostLine says, in one line, that a run lost its server and what its
// figures cover; "" for a run that kept it.
func lostLine(d *result.Document) string {
	l := d.ServerLost
	if l == nil {
		return ""
	}
	what := fmt.Sprintf("server lost at %.1f s and not back %.1f s later", l.At, l.Seconds)
	if l.Silent {
		what = fmt.Sprintf("server not answering from %.1f s for %.1f s", l.At, l.Seconds)
	}
	return fmt.Sprintf("FAILED: %s; the figures cover the %.1f s of the %.1f s window the server was up.", what, d.WindowSeconds, l.Window)
}

// errorRateLine says that the run failed because too many of its
// window's transactions did; "" where they did not.
func errorRateLine(d *result.Document) string {
	e := d.ErrorRate
	if e == nil || !e.Exceeded {
		return ""
	}
	what := "failed"
	if e.InDoubt > 0 {
		what = fmt.Sprintf("failed or were in doubt (%s in doubt, which nobody knows to have committed)", human.Thousands(float64(e.InDoubt)))
	}
	return fmt.Sprintf("FAILED: error rate %.1f%%: %s of the window's %s transactions %s, over the bound of %g%% (--max-error-rate).",
		e.Pct, human.Thousands(float64(e.Errors+e.InDoubt)), human.Thousands(float64(e.Transactions)), what, e.MaxPct)
}

// inDoubtTitle says what a transaction in doubt is.
const inDoubtTitle = "the commit was sent and the connection lost before its answer, so it may or may not have committed; counted neither as completed nor as failed"

// abortTitle says what an abort is.
const abortTitle = "errors the database asked the client to retry (a conflict: deadlock, serialization or certification failure) that were still failing after the last retry (--max-retries); counted among the errors"

// inDoubt is how many of d's window's transactions were in doubt.
func inDoubt(d *result.Document) int64 {
	var n int64
	for _, t := range d.Transactions {
		n += t.InDoubt
	}
	return n
}

// inDoubtLine says how many of the window's transactions were in doubt,
// and of which types; "" where none was.
func inDoubtLine(d *result.Document) string {
	n := inDoubt(d)
	if n == 0 {
		return ""
	}
	var by []string
	for _, t := range d.Transactions {
		if t.InDoubt > 0 {
			by = append(by, fmt.Sprintf("%s %s", t.Name, human.Thousands(float64(t.InDoubt))))
		}
	}
	return fmt.Sprintf("In doubt in the measured window: %s (%s): %s", human.Thousands(float64(n)), strings.Join(by, ", "), inDoubtTitle)
}

// auditHead is the heading of a run's audit: an audit whose every check
// was skipped judged nothing, and must not read as a pass.
func auditHead(items []result.AuditItem) string {
	for _, a := range items {
		if a.Result != "SKIP" {
			return "Audit"
		}
	}
	return fmt.Sprintf("Audit: none judged, all %d checks skipped", len(items))
}

// reliabilityLines are what was done to the system under test during the
// run (a server killed and restarted), what happened to it (outages, its
// loss, stalls), what it cost (the errors by class) and what the
// durability audit found; none for a quiet run.
func reliabilityLines(d *result.Document) []string {
	var lines []string
	for _, e := range d.Events {
		lines = append(lines, fmt.Sprintf("At %.1f s: %s", e.T, e.What))
	}
	lines = append(lines, d.Notes...)
	lines = append(lines, gapLines(d.Telemetry)...)
	if len(d.ErrorClasses) > 0 {
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(d.ErrorClasses)) {
			parts = append(parts, fmt.Sprintf("%s %s", c, human.Thousands(float64(d.ErrorClasses[c]))))
		}
		lines = append(lines, "Errors in the measured window by class: "+strings.Join(parts, ", "))
	}
	if l := inDoubtLine(d); l != "" {
		lines = append(lines, l)
	}
	if d.Durability != nil {
		lines = append(lines, durabilityLines(d.Durability)...)
	}
	return lines
}

// durabilityLines say what a durability audit found.
func durabilityLines(d *result.Durability) []string {
	lines := []string{fmt.Sprintf("Durability audit: %s acknowledged as committed and looked up after the run: %s missing; %s in doubt (the commit was sent, its answer never came), not counted as lost",
		human.Thousands(float64(d.Acknowledged)), human.Thousands(float64(d.Missing)), human.Thousands(float64(d.InDoubt)))}
	if len(d.MissingNames) > 0 {
		names := d.MissingNames[:min(len(d.MissingNames), missingShown)]
		line := "Missing: " + strings.Join(names, ", ")
		if more := d.Missing - int64(len(names)); more > 0 {
			line += fmt.Sprintf(" and %s more", human.Thousands(float64(more)))
		}
		lines = append(lines, line)
	}
	if d.Consistent != nil {
		verdict := "passed"
		if !*d.Consistent {
			verdict = "FAILED"
		}
		lines = append(lines, "Consistency check after the run: "+verdict)
	}
	if len(d.Nodes) > 0 {
		var each []string
		for _, n := range d.Nodes {
			switch {
			case n.Lost != "":
				each = append(each, n.Addr+" lost, not audited")
			case n.Consistent != nil && !*n.Consistent:
				each = append(each, fmt.Sprintf("%s %s missing, consistency FAILED", n.Addr, human.Thousands(float64(n.Missing))))
			default:
				each = append(each, fmt.Sprintf("%s %s missing", n.Addr, human.Thousands(float64(n.Missing))))
			}
		}
		lines = append(lines, "Audited on each node, the figures above the worst's: "+strings.Join(each, "; "))
	}
	return lines
}

// Durability writes what a durability audit found, a line each.
func Durability(w io.Writer, d *result.Durability) {
	for _, l := range durabilityLines(d) {
		fmt.Fprintln(w, l)
	}
}
