package workload

import (
	"strings"
	"testing"
)

// TestRate: a counter's rate between the window's marks, or the gap that
// says why there is none. A counter each server keeps for its own life
// (perLife) gives none across a restart, nor across two servers (a
// failover between the edges); a count read from the tables holds across
// both, replication carrying it, unless the second server lacks what the
// first had. The agreement line says which servers, and why.
func TestRate(t *testing.T) {
	const a, b = "10.0.0.1:5432", "10.0.0.2:5432"
	mark := func(at float64, server string, started, n int64) Mark {
		return Mark{At: at, Server: server, Values: map[string]int64{ServerStarted: started, "n": n}}
	}
	for _, c := range []struct {
		name       string
		start, end Mark
		perLife    bool
		rate       float64 // -1: none
		gap        Gap
		line       string // in the agreement line, with a client figure of 10
	}{
		{"one server", mark(0, a, 1, 100), mark(10, a, 1, 200), true, 10, Counted, "n: the client's figure differs from the database's by +0.00%"},
		{"no server named", mark(0, "", 1, 100), mark(10, "", 1, 200), true, 10, Counted, "by +0.00%"},
		{"restarted", mark(0, a, 1, 100), mark(10, a, 2, 200), true, -1, Reset, "reset during the window"},
		{"restarted, a table count", mark(0, a, 1, 100), mark(10, a, 2, 200), false, 10, Counted, "by +0.00%"},
		{"two servers", mark(0, a, 1, 100), mark(10, b, 2, 200), true, -1, Elsewhere,
			"n: client side only; the window's start was read on 10.0.0.1:5432 and its end on 10.0.0.2:5432, another server, whose counter is its own"},
		{"two servers, the same start", mark(0, a, 1, 100), mark(10, b, 1, 200), true, -1, Elsewhere, "whose counter is its own"},
		{"two servers, a table count", mark(0, a, 1, 100), mark(10, b, 2, 200), false, 10, Counted,
			"n: the client's figure differs from the database's by +0.00%; the window's start was read on 10.0.0.1:5432 and its end on 10.0.0.2:5432, another server: a count read from the tables holds across the two, since replication carries table data"},
		{"two servers, a table count behind", mark(0, a, 1, 100), mark(10, b, 2, 90), false, -1, Behind,
			"n: client side only; the window's start was read on 10.0.0.1:5432 and its end on 10.0.0.2:5432, another server, whose tables count less than the first's did"},
		{"one server, backwards", mark(0, a, 1, 100), mark(10, a, 1, 90), false, -1, Reset, "reset during the window"},
		{"the end lost", mark(0, a, 1, 100), Mark{Lost: true}, false, -1, Lost, "the server was lost"},
		{"unread", Mark{Unread: true}, Mark{Unread: true}, false, -1, Unread, "not read at the window's edges"},
		{"no counter", mark(0, a, 1, 100), Mark{At: 10, Server: b}, false, -1, NoCounter, "keeps no counter"},
	} {
		r := Rate(c.start, c.end, "n", c.perLife)
		switch {
		case r.Gap != c.gap:
			t.Errorf("%s: gap %v, want %v", c.name, r.Gap, c.gap)
		case c.rate < 0 && r.Value != nil:
			t.Errorf("%s: rate %v, want none", c.name, *r.Value)
		case c.rate >= 0 && (r.Value == nil || *r.Value != c.rate):
			t.Errorf("%s: rate %v, want %v", c.name, r.Value, c.rate)
		}
		if line := Agreement("n", r, 10); !strings.Contains(line, c.line) {
			t.Errorf("%s: agreement %q, want %q in it", c.name, line, c.line)
		}
		if per := r.Times(60); c.rate >= 0 && (per.Value == nil || *per.Value != c.rate*60 || *r.Value != c.rate) {
			t.Errorf("%s: per minute %v, want %v, and the rate itself left as it was", c.name, per.Value, c.rate*60)
		}
	}
}
