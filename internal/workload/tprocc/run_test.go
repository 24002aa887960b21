package tprocc

import (
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestSummarizeCounterReset: a transaction counter read in two lives of
// the server, or one that went backwards, gives no database-side rate;
// sum(d_next_o_id) still does.
func TestSummarizeCounterReset(t *testing.T) {
	begin := time.Now()
	res := &driver.Result{WindowStart: begin, WindowEnd: begin.Add(time.Minute), Tx: []driver.TxResult{{Count: 1000}},
		Tally: make(driver.Tally, len(tallyNames))}
	res.Tally[tNewOrders] = 450
	mark := func(at float64, started, xacts, next int64) workload.Mark {
		return workload.Mark{At: at, Values: map[string]int64{workload.ServerStarted: started, "xacts": xacts, "d_next_o_id": next}}
	}
	for _, c := range []struct {
		name       string
		start, end workload.Mark
		tpm        bool
	}{
		{"same server", mark(1, 5, 100, 9000), mark(61, 5, 1100, 9450), true},
		{"restarted, counter past where it was", mark(1, 5, 100, 9000), mark(61, 7, 600, 9450), false},
		{"counter went backwards", mark(1, 5, 100, 9000), mark(61, 5, 60, 9450), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &runner{cfg: runConfig{Warehouses: 1}}
			s := r.Summarize(res, c.start, c.end)
			if nopm := s.Values[metricNOPM].DB; nopm == nil || *nopm != 450 {
				t.Errorf("nopm = %v, want 450 from sum(d_next_o_id)", nopm)
			}
			if tpm := s.Values[metricTPM].DB; (tpm != nil) != c.tpm {
				t.Errorf("tpm = %v, want a rate: %v", tpm, c.tpm)
			}
			said := strings.Contains(strings.Join(s.Lines, "\n"), "reset during the window")
			if said == c.tpm {
				t.Errorf("summary lines %q; want the reset noted: %v", s.Lines, !c.tpm)
			}
		})
	}
}

// TestKeyedShape: a keyed run takes the specification's ten terminals a
// warehouse at most, and an efficiency over 100% comes with its reason.
func TestKeyedShape(t *testing.T) {
	r := &runner{cfg: runConfig{Warehouses: 2, Keying: true}}
	if err := r.CheckVUs(20); err != nil {
		t.Errorf("20 keyed VUs on 2 warehouses: %v", err)
	}
	err := r.CheckVUs(21)
	if err == nil || !strings.Contains(err.Error(), "--vus 20 or fewer") || !strings.Contains(err.Error(), "issue 22") {
		t.Errorf("21 keyed VUs on 2 warehouses: err = %v, want a refusal naming the limit", err)
	}
	r.cfg.Keying = false
	if err := r.CheckVUs(4000); err != nil {
		t.Errorf("without keying any number goes: %v", err)
	}
	for _, c := range []struct {
		nopm float64
		why  bool
	}{{12.86, false}, {25, false}, {26, true}} {
		line := efficiencyLine(c.nopm, 2, 60)
		if strings.Contains(line, "over 100%: think times are random") != c.why {
			t.Errorf("NOPM %.2f on 2 warehouses: %q", c.nopm, line)
		}
	}
}
