package result

import (
	"slices"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
)

// TestActionOutages: each Outage action's stretches become the document's
// figures, per VU summed up as min, median and max, with a note that says
// them in a sentence.
func TestActionOutages(t *testing.T) {
	holders := func(secs ...float64) []driver.HolderOutage {
		var out []driver.HolderOutage
		for _, s := range secs {
			out = append(out, driver.HolderOutage{Span: driver.Span{At: 20.1, Seconds: s}})
		}
		return out
	}
	for _, c := range []struct {
		name string
		o    driver.ActionOutage
		per  PerVU
		note string
	}{
		{"a kill", driver.ActionOutage{Action: driver.Span{At: 20, Seconds: 3.1}, What: "server killed (SIGKILL to pid 4242)",
			Longest: driver.Span{At: 20.1, Seconds: 21.6}, Holders: holders(22.9, 21.6, 22.0, 22.4)},
			PerVU{Count: 4, Min: 21.6, Median: 22.2, Max: 22.9, Seconds: []float64{22.9, 21.6, 22.0, 22.4}},
			"Outage around the action at 20.0 s, server killed (SIGKILL to pid 4242): no transaction completed from 20.1 s for 21.6 s; per VU 21.6-22.9 s, median 22.2"},
		{"one session", driver.ActionOutage{Action: driver.Span{At: 5, Seconds: 1}, Longest: driver.Span{At: 4.9, Seconds: 1.5}, Holders: holders(1.5), Sessions: true},
			PerVU{Sessions: true, Count: 1, Min: 1.5, Median: 1.5, Max: 1.5, Seconds: []float64{1.5}},
			"Outage around the action at 5.0 s: no transaction completed from 4.9 s for 1.5 s; per session 1.5 s"},
		{"never back", driver.ActionOutage{Action: driver.Span{At: 10, Seconds: 0.1}, Longest: driver.Span{At: 9.9, Seconds: 20}, ToEnd: true,
			Holders: []driver.HolderOutage{{Span: driver.Span{At: 9.9, Seconds: 20}, NotBack: true}, {Span: driver.Span{At: 9.8, Seconds: 20.1}, NotBack: true}, {Span: driver.Span{At: 9.9, Seconds: 3}}}},
			PerVU{Count: 3, Min: 3, Median: 20, Max: 20.1, NotBack: 2, Seconds: []float64{20, 20.1, 3}},
			"Outage around the action at 10.0 s: no transaction completed from 9.9 s to the window's end, 20.0 s later; per VU 3.0-20.1 s, median 20.0; 2 of 3 VUs never completed a transaction again, counted to the window's end"},
		// Two VUs a millisecond apart, as the driver gives them (a
		// Duration's Seconds: 1.981 s is 1.9809999999999999): their median
		// is no more than the longer one (a CI run's was 1.981 over a max
		// of 1.9809999999999999).
		{"two VUs", driver.ActionOutage{Action: driver.Span{At: 4, Seconds: 2}, Longest: driver.Span{At: 4, Seconds: 1.977},
			Holders: holders((1980 * time.Millisecond).Seconds(), (1981 * time.Millisecond).Seconds())},
			PerVU{Count: 2, Min: 1.98, Median: (1981 * time.Millisecond).Seconds(), Max: (1981 * time.Millisecond).Seconds(), Seconds: []float64{1.98, (1981 * time.Millisecond).Seconds()}},
			"Outage around the action at 4.0 s: no transaction completed from 4.0 s for 2.0 s; per VU 2.0 s"},
	} {
		d := &Document{}
		d.actionOutages(&driver.Result{ActionOutages: []driver.ActionOutage{c.o}})
		if len(d.ActionOutages) != 1 || len(d.Notes) != 1 {
			t.Fatalf("%s: %+v, notes %q", c.name, d.ActionOutages, d.Notes)
		}
		a, p := d.ActionOutages[0], d.ActionOutages[0].PerVU
		if p.Count != c.per.Count || p.Min != c.per.Min || p.Median != c.per.Median || p.Max != c.per.Max ||
			p.NotBack != c.per.NotBack || p.Sessions != c.per.Sessions || !slices.Equal(p.Seconds, c.per.Seconds) {
			t.Errorf("%s: per VU %+v, want %+v", c.name, p, c.per)
		}
		if a.At != c.o.Action.At || a.Returned != c.o.Action.At+c.o.Action.Seconds || a.Outage.Seconds != c.o.Longest.Seconds || a.ToEnd != c.o.ToEnd {
			t.Errorf("%s: %+v, from %+v", c.name, a, c.o)
		}
		if d.Notes[0] != c.note {
			t.Errorf("%s: note\n%q, want\n%q", c.name, d.Notes[0], c.note)
		}
	}
	many := make([]driver.HolderOutage, maxPerVU+1)
	d := &Document{}
	d.actionOutages(&driver.Result{ActionOutages: []driver.ActionOutage{{Holders: many}}})
	if p := d.ActionOutages[0].PerVU; p.Seconds != nil || p.Count != maxPerVU+1 {
		t.Errorf("%d VUs: per VU %d listed of %d, want the summary alone", maxPerVU+1, len(p.Seconds), p.Count)
	}
}
