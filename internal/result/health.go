package result

import (
	"fmt"

	"github.com/dbrig/dbrig/internal/driver"
)

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
		var errs int64
		for _, tx := range r.Tx {
			errs += tx.Errors
		}
		window := 0.0
		if !r.WindowStart.IsZero() {
			window = r.WindowEnd.Sub(r.WindowStart).Seconds()
		}
		d.ServerLost = &ServerLost{At: o.At, Seconds: o.Seconds, Errors: errs, Window: window}
		d.Notes = append(d.Notes,
			fmt.Sprintf("Server lost at %.1f s and not back %.1f s later: the run ended there, a failure (%d errors in the window)", o.At, o.Seconds, errs),
			fmt.Sprintf("Throughput is over the %.1f s of the window the server was up, not all its %.1f s", r.WindowSeconds(), window))
	}
	for _, s := range r.Stalls {
		d.Stalls = append(d.Stalls, Span(s))
		d.Notes = append(d.Notes, fmt.Sprintf("Stall from %.1f s for %.1f s: no transaction ended while virtual users waited in one", s.At, s.Seconds))
	}
}
