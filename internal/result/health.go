package result

import (
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
)

// lateNoted is how late a window must close to be said so: an edge waits
// for the transactions in hand, which take milliseconds in a healthy run.
const lateNoted = 1.0

// health records what happened to the server during r, as figures and
// as notes.
func (d *Document) health(r *driver.Result) {
	for i, o := range r.Outages {
		d.Outages = append(d.Outages, Span(o))
		if r.ServerLost && i == len(r.Outages)-1 {
			break
		}
		d.Notes = append(d.Notes, fmt.Sprintf("No server from %.1f s for %.1f s: connections were lost and none could be opened until it was back", o.At, o.Seconds))
	}
	if r.ServerLost {
		o := r.Outages[len(r.Outages)-1]
		var errs, doubts int64
		for _, tx := range r.Tx {
			errs += tx.Errors
			doubts += tx.InDoubt
		}
		window := 0.0
		if !r.WindowStart.IsZero() {
			window = r.WindowEnd.Sub(r.WindowStart).Seconds()
		}
		d.ServerLost = &ServerLost{At: o.At, Seconds: o.Seconds, Errors: errs, InDoubt: doubts, Window: window, Silent: r.LostSilent}
		cost := fmt.Sprintf("%d errors", errs)
		if doubts > 0 {
			cost += fmt.Sprintf(" and %d in doubt", doubts)
		}
		d.Notes = append(d.Notes,
			fmt.Sprintf("Server lost at %.1f s and not back %.1f s later: the run ended there, a failure (%s in the window)", o.At, o.Seconds, cost),
			fmt.Sprintf("Throughput is over the %.1f s of the window the server was up, not all its %.1f s", r.WindowSeconds(), window))
		if r.LostSilent {
			d.Notes[len(d.Notes)-2] = fmt.Sprintf("Server lost at %.1f s: it answered nothing for %.1f s (stopped, or behind a connection left half-open), and the run ended there, a failure (%s in the window)", o.At, o.Seconds, cost)
		}
	}
	// A server lost says why the window's end waited.
	if late := r.Late.Seconds(); !r.ServerLost && (late >= lateNoted || r.Stuck > 0) {
		d.Late = &Late{Seconds: r.Late.Round(time.Millisecond).Seconds(), Stuck: r.Stuck}
		note := fmt.Sprintf("The window closed %.1f s late, waiting for the transactions in hand", late)
		if r.Stuck > 0 {
			note += fmt.Sprintf("; %d %s still in one then, which count on neither side", r.Stuck, plural(r.Stuck, "virtual user was", "virtual users were"))
		}
		d.Notes = append(d.Notes, note+fmt.Sprintf(": its rates are over the %.1f s it lasted", r.WindowSeconds()))
	}
	for _, s := range r.Stalls {
		d.Stalls = append(d.Stalls, Span(s))
		note := fmt.Sprintf("Stall from %.1f s for %.1f s: no transaction ended while virtual users waited in one", s.At, s.Seconds)
		if s.Answered {
			note += "; the server answered meanwhile, so they waited on something inside it (locks, a statement that did not end)"
		}
		d.Notes = append(d.Notes, note)
	}
}
