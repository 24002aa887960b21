package result

import (
	"fmt"
	"math"
	"slices"

	"github.com/dbrig/dbrig/internal/driver"
)

// ActionOutage is what an action that stops the application (a server
// killed, a failover) cost it: the stretches in which no transaction
// completed around it, overall and for each virtual user.
type ActionOutage struct {
	// At and Returned are the action's start and its return, in seconds
	// since the run started; What is the first thing it did, its first
	// event.
	At       float64 `json:"at"`
	Returned float64 `json:"returned"`
	What     string  `json:"what,omitempty"`
	// Outage is the longest stretch in which no transaction completed
	// that overlaps the action's span; ToEnd says none completed after
	// it, and it runs to the window's end.
	Outage Span  `json:"outage"`
	ToEnd  bool  `json:"to_window_end,omitempty"`
	PerVU  PerVU `json:"per_vu"`
}

// PerVU is each virtual user's (a pooled run's: each session's) own
// longest stretch without a completion around an action, from its last
// completion before to its first after.
type PerVU struct {
	// Sessions says they are a pooled run's sessions.
	Sessions bool    `json:"sessions,omitempty"`
	Count    int     `json:"count"`
	Min      float64 `json:"min"`
	Median   float64 `json:"median"`
	Max      float64 `json:"max"`
	// NotBack is how many never completed a transaction again: theirs
	// run to the window's end.
	NotBack int `json:"not_back,omitempty"`
	// Seconds is each one's, in the run's order of them; absent past
	// maxPerVU of them.
	Seconds []float64 `json:"seconds,omitempty"`
}

// maxPerVU is the most virtual users whose every outage a document
// lists; a run of thousands of terminals keeps the summary alone.
const maxPerVU = 300

// actionOutages records what r's Outage actions cost the application,
// with a note each.
func (d *Document) actionOutages(r *driver.Result) {
	for _, o := range r.ActionOutages {
		a := ActionOutage{At: o.Action.At, Returned: o.Action.At + o.Action.Seconds, What: o.What,
			Outage: Span{At: o.Longest.At, Seconds: o.Longest.Seconds}, ToEnd: o.ToEnd, PerVU: perVU(o)}
		d.ActionOutages = append(d.ActionOutages, a)
		d.Notes = append(d.Notes, a.note())
	}
}

func perVU(o driver.ActionOutage) PerVU {
	p := PerVU{Sessions: o.Sessions, Count: len(o.Holders)}
	var all []float64
	for _, h := range o.Holders {
		all = append(all, h.Seconds)
		if h.NotBack {
			p.NotBack++
		}
	}
	if len(all) <= maxPerVU {
		p.Seconds = all
	}
	sorted := slices.Sorted(slices.Values(all))
	if n := len(sorted); n > 0 {
		p.Min, p.Max = sorted[0], sorted[n-1]
		p.Median = sorted[n/2]
		if n%2 == 0 {
			// To the millisecond, as the figures it is made of, and between
			// them: those are a Duration's Seconds, not always the nearest
			// float to their millisecond (1.981 s is 1.9809999999999999),
			// and the rounded mean of 1.98 and that was 1.981, over the max.
			lo, hi := sorted[n/2-1], sorted[n/2]
			p.Median = min(max(math.Round((lo+hi)*500)/1000, lo), hi)
		}
	}
	return p
}

// note says in a sentence what the action cost: "Outage around the action
// at 20.0 s, server killed (SIGKILL to pid 4242): no transaction completed
// from 20.1 s for 21.6 s; per VU 21.6-22.9 s, median 22.0".
func (a ActionOutage) note() string {
	s := fmt.Sprintf("Outage around the action at %.1f s", a.At)
	if a.What != "" {
		s += ", " + a.What
	}
	if a.ToEnd {
		s += fmt.Sprintf(": no transaction completed from %.1f s to the window's end, %.1f s later", a.Outage.At, a.Outage.Seconds)
	} else {
		s += fmt.Sprintf(": no transaction completed from %.1f s for %.1f s", a.Outage.At, a.Outage.Seconds)
	}
	p, who := a.PerVU, "VU"
	if p.Sessions {
		who = "session"
	}
	switch {
	case p.Count == 0:
		return s
	case fmt.Sprintf("%.1f", p.Min) == fmt.Sprintf("%.1f", p.Max):
		s += fmt.Sprintf("; per %s %.1f s", who, p.Max)
	default:
		s += fmt.Sprintf("; per %s %.1f-%.1f s, median %.1f", who, p.Min, p.Max, p.Median)
	}
	if p.NotBack > 0 {
		s += fmt.Sprintf("; %d of %d %s never completed a transaction again, counted to the window's end", p.NotBack, p.Count, plural(p.Count, who, who+"s"))
	}
	return s
}
