package result

import (
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

var headDefs = []MetricDef{
	{Key: "nopm", Label: "NOPM"}, {Key: "tpm", Label: "TPM"}, {Key: "reads", Label: "physical reads/s"}, {Key: "secs", Label: "seconds per loop"},
}

// headValues are issue 35's two runs at once, as one of them saw them:
// the database counted both runs' New-Orders, the client its own.
func headValues(nopmDB float64) map[string]workload.Value {
	k := workload.Known
	return map[string]workload.Value{
		"nopm":  {DB: k(nopmDB), Client: k(38732), Tolerance: workload.Tolerance},
		"tpm":   {DB: k(86000), Client: k(86100), Tolerance: workload.Tolerance},
		"reads": {DB: k(1200)},
		// Two clocks of one loop, which differ by the round trip: never
		// held to each other.
		"secs": {DB: k(1.0), Client: k(1.2)},
	}
}

func TestHeadlineSides(t *testing.T) {
	seen := &telemetry.Recording{Others: &telemetry.Others{Sessions: 5, Clients: map[string]int{"dbrig 3f9a2c1b": 4, "": 1}}}
	none := &telemetry.Recording{Others: &telemetry.Others{}}
	unread := &telemetry.Recording{Unavailable: map[string]string{telemetry.OtherSessions: "SQLite keeps no list"}}
	for _, c := range []struct {
		name     string
		nopmDB   float64
		rec      *telemetry.Recording
		compared bool
		side     string
		line     []string // what the line on the headline says; nil: no line
	}{
		{"agree", 38900, seen, true, SideDB, nil},
		{"others seen", 77689, seen, true, SideClient, []string{
			"Headline: the client's figure stands for NOPM (38,732, where the database counted 77,689): ",
			`5 other sessions were active in the measured database during the window ("dbrig 3f9a2c1b" ×4, a client without a name ×1)`,
			"physical reads/s, which only the database counts, counts theirs too",
		}},
		{"none seen", 77689, none, true, SideClient, []string{"no other client's session was seen", "a window edge read late"}},
		{"not readable", 77689, unread, true, SideClient, []string{"could not be read (SQLite keeps no list)"}},
		{"no telemetry", 77689, nil, true, SideClient, []string{"could not be read (the run recorded no telemetry)"}},
		{"a merge missing parts", 77689, seen, false, SideDB, nil},
	} {
		d := &Document{Telemetry: c.rec}
		d.setMetrics(headDefs, headValues(c.nopmDB), c.compared)
		nopm, _ := d.Metric("nopm")
		if nopm.Side() != c.side {
			t.Errorf("%s: nopm's side %q, want %q", c.name, nopm.Side(), c.side)
		}
		for key, side := range map[string]string{"tpm": SideDB, "reads": SideDB, "secs": SideDB} {
			if m, _ := d.Metric(key); m.Side() != side {
				t.Errorf("%s: %s's side %q, want %q", c.name, key, m.Side(), side)
			}
		}
		switch {
		case c.line == nil && len(d.Lines) > 0:
			t.Errorf("%s: lines %q, want none", c.name, d.Lines)
		case c.line != nil && len(d.Lines) != 1:
			t.Errorf("%s: lines %q, want one", c.name, d.Lines)
		case c.line != nil:
			for _, want := range c.line {
				if !strings.Contains(d.Lines[0], want) {
					t.Errorf("%s: %q does not say %q", c.name, d.Lines[0], want)
				}
			}
		}
	}
}

// TestHeadlineValue: the figure that stands is the side the run chose; a
// document made before runs chose takes the database's where it has one.
func TestHeadlineValue(t *testing.T) {
	db, client := 2.0, 1.0
	for _, c := range []struct {
		m    Metric
		want float64
	}{
		{Metric{DB: &db, Client: &client, Headline: SideClient}, client},
		{Metric{DB: &db, Client: &client, Headline: SideDB}, db},
		{Metric{DB: &db, Client: &client}, db},
		{Metric{Client: &client}, client},
	} {
		if v := c.m.Value(); v != c.want {
			t.Errorf("%+v: value %v, want %v", c.m, v, c.want)
		}
	}
}
