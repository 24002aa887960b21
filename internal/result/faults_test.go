package result

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// faultRun is a fixture run document: one action outage per entry of
// outages (its overall seconds, and its per-VU median and max), inDoubt
// New-Orders in doubt over two types, and an audit when audit is set.
func faultRun(outages [][3]float64, inDoubt int64, audit *Durability) *Document {
	d := &Document{Durability: audit, Transactions: []Tx{
		{Name: "new_order", Count: 1000, InDoubt: inDoubt / 2}, {Name: "payment", Count: 900, InDoubt: inDoubt - inDoubt/2},
	}}
	for i, o := range outages {
		a := ActionOutage{At: 20 + float64(i), Outage: Span{At: 20.1 + float64(i), Seconds: o[0]}}
		if o[1] > 0 {
			a.PerVU = PerVU{Count: 4, Min: o[1] - 0.1, Median: o[1], Max: o[2]}
		}
		d.ActionOutages = append(d.ActionOutages, a)
	}
	return d
}

// TestFaultStats: each repetition's outage, in doubt and audit go into
// its point, which gets their means with Student's t intervals, and the
// change from the baseline point's with Welch's interval, in seconds and
// counts; the audits are summed.
func TestFaultStats(t *testing.T) {
	audit := func(acked, missing, inDoubt int64) *Durability {
		return &Durability{Acknowledged: acked, Missing: missing, InDoubt: inDoubt}
	}
	// The baseline's outages: 21, 22 and 23 s, per VU a median 0.5 s
	// longer and a max 1 s longer.
	baseline := []*Document{
		faultRun([][3]float64{{21, 21.5, 22}}, 2, audit(1000, 0, 2)),
		faultRun([][3]float64{{22, 22.5, 23}}, 4, audit(1100, 0, 4)),
		faultRun([][3]float64{{23, 23.5, 24}}, 0, audit(1200, 0, 0)),
	}
	half3 := 4.303 * 1 / math.Sqrt(3) // stddev 1, n 3
	for _, c := range []struct {
		name string
		runs []*Document
		// outage is the point's mean outage and its half interval; diff
		// the change from the baseline's 22 s, and its half interval.
		outage, outageHalf, diff, diffHalf float64
		significant                        bool
		// vuMax is the mean per-VU max, absent (NaN) when none.
		vuMax   float64
		inDoubt float64
		sum     *DurabilitySum
	}{
		// Welch with equal variances 1, n 3 each: df 4, se sqrt(2/3).
		{"shorter, significant", []*Document{
			faultRun([][3]float64{{5, 5.5, 6}}, 1, audit(1500, 0, 1)),
			faultRun([][3]float64{{6, 6.5, 7}}, 3, audit(1600, 0, 3)),
			faultRun([][3]float64{{7, 7.5, 8}}, 2, audit(1700, 0, 2)),
		}, 6, half3, -16, 2.776 * math.Sqrt(2.0/3), true, 7, 2, &DurabilitySum{Audits: 3, Acknowledged: 4800, InDoubt: 6}},
		// Spread wide: variances 16 and 1, df = (16/3+1/3)^2/((16/3)^2/2+(1/3)^2/2) = 2.2491.
		{"overlapping, not significant", []*Document{
			faultRun([][3]float64{{16, 16.5, 17}}, 0, audit(900, 2, 0)),
			faultRun([][3]float64{{20, 20.5, 21}}, 0, audit(900, 1, 0)),
			faultRun([][3]float64{{24, 24.5, 25}}, 0, audit(900, 0, 0)),
		}, 20, 4.303 * 4 / math.Sqrt(3), -2, TQuantile975(2.2491349480968856) * math.Sqrt(17.0/3), false, 21, 0, &DurabilitySum{Audits: 3, Acknowledged: 2700, Missing: 3}},
		// The longest of two actions stands, with its own per-VU
		// figures; an action without them (no VU held) has none.
		// Variances 2 (n 2) and 1 (n 3): df = (1+1/3)^2/(1+(1/3)^2/2) = 32/19.
		{"two actions, the longest stands", []*Document{
			faultRun([][3]float64{{2, 2.5, 3}, {10, 0, 0}}, 0, nil),
			faultRun([][3]float64{{12, 12.5, 13}, {1, 1.5, 2}}, 0, nil),
		}, 11, 12.706, -11, TQuantile975(32.0/19) * math.Sqrt(4.0/3), true, 13, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := &Sweep{Repeat: 3, Points: []SweepPoint{{BaselinePoint: -1}, {BaselinePoint: 0}}}
			for _, d := range baseline {
				doc.Points[0].AddFaults(d)
			}
			for _, d := range c.runs {
				doc.Points[1].AddFaults(d)
			}
			Recompute(doc)
			p := doc.Points[1]
			st := p.FaultStats[OutageKey]
			if st == nil || st.N != len(c.runs) {
				t.Fatalf("outage stats %+v, want %d repetitions", st, len(c.runs))
			}
			near(t, "outage mean", st.Mean, c.outage, 1e-9)
			near(t, "outage ci low", st.CILow, c.outage-c.outageHalf, 1e-6)
			near(t, "outage ci high", st.CIHigh, c.outage+c.outageHalf, 1e-6)
			ch := p.FaultChanges[OutageKey]
			if ch == nil {
				t.Fatalf("no change in the outage: %+v", p.FaultChanges)
			}
			near(t, "change", ch.Diff, c.diff, 1e-9)
			near(t, "change low", ch.Low, c.diff-c.diffHalf, 1e-3)
			near(t, "change high", ch.High, c.diff+c.diffHalf, 1e-3)
			if ch.Significant != c.significant {
				t.Errorf("change %+v: significant %v, want %v", ch, ch.Significant, c.significant)
			}
			if vm := p.FaultStats[OutageVUMaxKey]; vm == nil || math.Abs(vm.Mean-c.vuMax) > 1e-9 {
				t.Errorf("per-VU max %+v, want a mean of %g", vm, c.vuMax)
			}
			if id := p.FaultStats[InDoubtKey]; id == nil || id.Mean != c.inDoubt || id.N != len(c.runs) {
				t.Errorf("in doubt %+v, want a mean of %g over every repetition", id, c.inDoubt)
			}
			if (p.Durability == nil) != (c.sum == nil) || c.sum != nil && *p.Durability != *c.sum {
				t.Errorf("audits summed %+v, want %+v", p.Durability, c.sum)
			}
			if c.sum != nil {
				ms := p.FaultStats[MissingKey]
				mean := float64(c.sum.Missing) / float64(c.sum.Audits)
				if ms == nil || ms.Mean != mean || ms.CILow > mean || ms.CIHigh < mean {
					t.Errorf("missing %+v, want a mean of %g inside its interval", ms, mean)
				}
			}
			base := doc.Points[0]
			if len(base.FaultChanges) != 0 || base.FaultStats[OutageKey].Mean != 22 || *base.Durability != (DurabilitySum{Audits: 3, Acknowledged: 3300, InDoubt: 6}) {
				t.Errorf("baseline: changes %+v, outage %+v, audits %+v", base.FaultChanges, base.FaultStats[OutageKey], base.Durability)
			}
		})
	}
}

// TestFaultStatsAbsent: a run that acted on nothing has no outage, and
// one without an audit no audit counts; its in doubt counts all the
// same, so that a sweep's mean of them is over every repetition. One
// repetition a side gives a change without an interval, which is never
// significant, and the sweep says so once.
func TestFaultStatsAbsent(t *testing.T) {
	doc := &Sweep{Repeat: 1, Points: []SweepPoint{{BaselinePoint: -1}, {BaselinePoint: 0}}}
	doc.Points[0].AddFaults(faultRun(nil, 0, nil))
	doc.Points[1].AddFaults(faultRun(nil, 3, nil))
	Recompute(doc)
	p := doc.Points[1]
	if _, ok := p.Faults[OutageKey]; ok || p.Durability != nil || len(p.Faults) != 1 {
		t.Errorf("faults %v, audits %+v; want in doubt alone", p.Faults, p.Durability)
	}
	if c := p.FaultChanges[InDoubtKey]; c == nil || c.Diff != 3 || c.Low != 3 || c.High != 3 || c.Significant {
		t.Errorf("change in doubt %+v, want +3 without an interval, not significant", c)
	}
	if !slices.Contains(doc.Notes, singleNote) {
		t.Errorf("notes %q, want the single repetition's", doc.Notes)
	}
	Recompute(doc)
	if len(doc.Notes) != 1 {
		t.Errorf("notes %q after a second Recompute, want the note once", doc.Notes)
	}
}

// TestSweepWithoutFaults: a sweep document from before the fault
// figures reads, its points without them, and Recompute makes none.
func TestSweepWithoutFaults(t *testing.T) {
	old := `{"schema_version": 2, "kind": "sweep", "name": "old", "workload": "tproc-c",
		"metrics": [{"key": "nopm", "label": "NOPM", "higher_is_better": true}], "primary_metric": "nopm",
		"varied": ["vus"], "repeat": 2, "done": 4, "complete": true, "order": [[0,1],[1,1],[0,2],[1,2]],
		"points": [{"params": {"vus": "1"}, "runs": ["runs/p01-r1.json", "runs/p01-r2.json"], "values": {"nopm": [100, 110]}, "p95_ms": [1, 2], "baseline_point": -1},
			{"params": {"vus": "2"}, "runs": ["runs/p02-r1.json", "runs/p02-r2.json"], "values": {"nopm": [200, 210]}, "p95_ms": [1, 2], "baseline_point": 0}]}`
	s, err := ParseSweep("old.json", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	Recompute(s)
	for i, p := range s.Points {
		if p.Faults != nil || len(p.FaultStats) != 0 || len(p.FaultChanges) != 0 || p.Durability != nil {
			t.Errorf("point %d: faults %v, stats %v, changes %v, audits %v; want none", i+1, p.Faults, p.FaultStats, p.FaultChanges, p.Durability)
		}
	}
	if g := s.Points[1].Gains["nopm"]; g == nil || !g.Significant {
		t.Errorf("gain %+v", g)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"faults"`, `"fault_stats"`, `"fault_changes"`, `"durability"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("written back, the old sweep has %s: %s", key, b)
		}
	}
}
