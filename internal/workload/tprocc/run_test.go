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
