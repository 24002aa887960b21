package tprocc

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
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
	r := &runner{cfg: runConfig{Warehouses: 2, Keying: true, PerWarehouse: terminalsPerWarehouse}}
	if err := r.CheckVUs(20); err != nil {
		t.Errorf("20 keyed VUs on 2 warehouses: %v", err)
	}
	err := r.CheckVUs(21)
	if err == nil || !strings.Contains(err.Error(), "--vus 20 or fewer") || !strings.Contains(err.Error(), "--terminals-per-warehouse M for a scale test") {
		t.Errorf("21 keyed VUs on 2 warehouses: err = %v, want a refusal naming the limit and the flag", err)
	}
	r.cfg.Keying = false
	if err := r.CheckVUs(4000); err != nil {
		t.Errorf("without keying any number goes: %v", err)
	}
	for _, c := range []struct {
		nopm float64
		why  bool
	}{{12.86, false}, {25, false}, {26, true}} {
		line := r.shape().efficiencyLine(c.nopm, 60)
		if strings.Contains(line, "over 100%: think times are random") != c.why {
			t.Errorf("NOPM %.2f on 2 warehouses: %q", c.nopm, line)
		}
	}
}

// TestTerminalsPerWarehouse: --terminals-per-warehouse raises the keyed
// limit, needs keying and a positive count, and turns the efficiency into
// one per terminal, named as not the specification's shape; the default
// keeps the specification's figure.
func TestTerminalsPerWarehouse(t *testing.T) {
	for _, w := range []tprocc{{perWarehouse: 0, keying: true}, {perWarehouse: -3, keying: true}, {perWarehouse: 200}} {
		var user *exitcode.UserError
		if err := w.CheckRun(); !errors.As(err, &user) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: err = %v, want one line of user error", w, err)
		}
	}
	for _, w := range []tprocc{{perWarehouse: 10}, {perWarehouse: 10, keying: true}, {perWarehouse: 200, keying: true}} {
		if err := w.CheckRun(); err != nil {
			t.Errorf("%+v: %v", w, err)
		}
	}

	r := &runner{cfg: runConfig{Warehouses: 10, Keying: true, PerWarehouse: 200}}
	if err := r.CheckVUs(2000); err != nil {
		t.Errorf("2,000 keyed VUs on 10 warehouses at 200 a warehouse: %v", err)
	}
	if err := r.CheckVUs(2001); err == nil || !strings.Contains(err.Error(), "--vus 2000 or fewer") {
		t.Errorf("2,001 at 200 a warehouse: err = %v, want the refusal", err)
	}
	// A limit past int's range is no limit: it once wrapped round, and
	// refused 20 VUs, advising --vus -9223372036854775808 or fewer.
	for _, per := range []int{1 << 62, math.MaxInt} {
		huge := &runner{cfg: runConfig{Warehouses: 2, Keying: true, PerWarehouse: per}}
		if err := huge.CheckVUs(20); err != nil {
			t.Errorf("20 keyed VUs at %d a warehouse: %v", per, err)
		}
	}

	begin := time.Now()
	res := &driver.Result{WindowStart: begin, WindowEnd: begin.Add(time.Minute), Tx: []driver.TxResult{{Count: 2572}},
		Tally: make(driver.Tally, len(tallyNames))}
	res.Tally[tNewOrders] = 2572
	r.terminals.Store(2000)
	s := r.Summarize(res, workload.Mark{}, workload.Mark{})
	if eff := s.Extra["efficiency_pct"].(float64); math.Abs(eff-100) > 1e-9 {
		t.Errorf("2,572 NOPM of 2,000 terminals: efficiency %v, want 100 (1.286 NOPM each)", eff)
	}
	if s.Extra["efficiency_basis"] != "per_terminal" || s.Extra["terminals_per_warehouse"] != 200 {
		t.Errorf("extra %v: want the per-terminal basis and 200 a warehouse", s.Extra)
	}
	if lines := strings.Join(s.Lines, "\n"); !strings.Contains(lines, "over 2000 terminals, 200 a warehouse: not the specification's 10") {
		t.Errorf("summary lines %q: want the shape named", lines)
	}

	// The specification's shape: per warehouse, whatever the VUs.
	r.cfg.PerWarehouse = terminalsPerWarehouse
	r.terminals.Store(50)
	res.Tally[tNewOrders] = 64
	s = r.Summarize(res, workload.Mark{}, workload.Mark{})
	if eff := s.Extra["efficiency_pct"].(float64); math.Abs(eff-64/(12.86*10)*100) > 1e-9 || len(s.Extra) != 1 {
		t.Errorf("64 NOPM on 10 warehouses: extra %v, want only efficiency_pct %.3f", s.Extra, 64/(12.86*10)*100)
	}

	// The database counted 12,800 New-Orders in the minute, another
	// client's with the run's 6,400: the efficiency is the client's
	// figure's, as the headline is; within 1% it is the database's.
	res.Tally[tNewOrders] = 6400
	for db, want := range map[int64]float64{12800: 6400, 6432: 6432} {
		start := workload.Mark{At: 0, Values: map[string]int64{"d_next_o_id": 1000}}
		end := workload.Mark{At: 60, Values: map[string]int64{"d_next_o_id": 1000 + db}}
		s = r.Summarize(res, start, end)
		if eff := s.Extra["efficiency_pct"].(float64); math.Abs(eff-want/(12.86*10)*100) > 1e-9 {
			t.Errorf("%d New-Orders by the database, 6,400 by the client: efficiency %.3f%%, want %.0f's", db, eff, want)
		}
	}
}

// TestAuditDealers: the mix audit judges an item only with a deck's worth
// of its events a session, since each session deals them exactly over a
// full deck; fewer, as with thousands of keyed VUs each on its own
// session, is SKIPped with the figure. The count comes from the sessions
// the driver opened.
func TestAuditDealers(t *testing.T) {
	begin := time.Now()
	res := &driver.Result{WindowStart: begin, WindowEnd: begin.Add(time.Minute), Tx: []driver.TxResult{{Count: 12000}},
		Tally: make(driver.Tally, len(tallyNames))}
	tl := res.Tally
	tl[tNewOrders], tl[tRollbacks] = 5400, 54
	tl[tOrderLines], tl[tRemoteLines] = 54000, 540
	tl[tPayments], tl[tRemotePayments] = 5160, 774
	tl[tCustomerSelects], tl[tByLastName] = 5640, 3384
	r := &runner{cfg: runConfig{Warehouses: 4}}
	for _, c := range []struct {
		sessions int64
		want     []string
	}{
		{0, []string{"PASS", "PASS", "PASS", "PASS"}},
		{40, []string{"PASS", "PASS", "PASS", "PASS"}},
		{54, []string{"PASS", "PASS", "SKIP", "PASS"}}, // 100 New-Orders a session, 95.6 Payments
		{55, []string{"SKIP", "PASS", "SKIP", "PASS"}},
		{4000, []string{"SKIP", "SKIP", "SKIP", "SKIP"}},
	} {
		r.sessions.Store(c.sessions)
		items := r.Summarize(res, workload.Mark{}, workload.Mark{}).Audit
		for i, a := range items {
			if a.Result != c.want[i] {
				t.Errorf("%d sessions: %s %s (%s), want %s", c.sessions, a.Name, a.Result, a.Reason, c.want[i])
			}
		}
		if c.sessions == 4000 && items[0].Reason != "fewer than a deck (100) per session: 1.4 New-Orders a session, too few for the dealt proportions to hold" {
			t.Errorf("reason %q", items[0].Reason)
		}
	}
}
