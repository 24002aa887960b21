package tprocc

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
)

// runner is an opened TPROC-C run: it hands the driver virtual users and
// reads the database's own counters at the window's edges.
type runner struct {
	t      dbtarget.Target
	cfg    runConfig
	schema workload.SQLFile
	// ctl reads the marks, on a connection no virtual user shares.
	ctl *workload.Conn
}

func (w *tprocc) Open(ctx context.Context, t dbtarget.Target) (workload.Run, error) {
	o, err := workload.OpenRun(ctx, t, sqlFiles, w.mode, "tx.sql", readMeta)
	if err != nil {
		return nil, err
	}
	seed := uint64(time.Now().UnixNano())
	r := &runner{t: t, schema: o.Schema, ctl: &o.Conn, cfg: runConfig{
		Warehouses: o.Meta.warehouses, Mode: o.Mode, AllWarehouses: w.allWarehouses, Keying: w.keying,
		Seed: seed, C: runConstants(seed, o.Meta.cLoad), Q: o.SQL,
	}}
	return r, nil
}

// runConstants picks the run-time NURand constants. For C_LAST the
// distance from the load-time constant must lie in 65..119 and be neither
// 96 nor 112 (clause 2.1.6.1), so the run does not hit exactly the names
// the load made common.
func runConstants(seed uint64, cLoad int) cRun {
	r := workload.NewRand(seed, 0xC2)
	c := cRun{ID: r.Int(0, 1023), ItemID: r.Int(0, 8191)}
	for {
		c.Last = r.Int(0, 255)
		d := c.Last - cLoad
		if d < 0 {
			d = -d
		}
		if d >= 65 && d <= 119 && d != 96 && d != 112 {
			return c
		}
	}
}

// terminalsPerWarehouse is the specification's population of terminals
// for each warehouse (clause 4.2.2), which keying and think times assume.
const terminalsPerWarehouse = 10

// maxKeyedNOPM is the New-Orders a minute that a warehouse's terminals can
// enter at most with the specification's keying and think times.
const maxKeyedNOPM = 12.86

var _ workload.VULimiter = (*runner)(nil)

// CheckVUs refuses a keyed run of more virtual users than the
// specification's terminals, which would no longer be its shape: the
// efficiency would pass 100% and the mix audit fail.
func (r *runner) CheckVUs(vus int) error {
	if !r.cfg.Keying || vus <= terminalsPerWarehouse*r.cfg.Warehouses {
		return nil
	}
	warehouses := fmt.Sprintf("%d warehouses", r.cfg.Warehouses)
	if r.cfg.Warehouses == 1 {
		warehouses = "1 warehouse"
	}
	return exitcode.Userf("--keying-thinking with %d VUs on %s is more than the specification's %d terminals a warehouse (clause 4.2.2): use --vus %d or fewer, or build more warehouses (a flag to ask for more explicitly comes with issue 22)",
		vus, warehouses, terminalsPerWarehouse, terminalsPerWarehouse*r.cfg.Warehouses)
}

func (r *runner) TxNames() []string    { return txNames }
func (r *runner) TallyNames() []string { return tallyNames }

func (r *runner) NewVU(ctx context.Context, id int) (driver.VU, error) {
	return newVU(ctx, r.t, &r.cfg, id)
}

// NewTerminal and NewSession are the two halves of a virtual user, for a
// driver that lends a pool of sessions to many terminals (issue 22). The
// compile-time check against driver.Pooled, and the driver's
// Terminal in place of *terminal, come with the driver's pool.
func (r *runner) NewTerminal(id int) *terminal {
	tm := newTerminal(&r.cfg, id)
	return &tm
}

func (r *runner) NewSession(ctx context.Context, _ int) (*session, error) {
	return openSession(ctx, r.t, &r.cfg)
}

func (r *runner) Config() map[string]any {
	return map[string]any{
		"warehouses": r.cfg.Warehouses, "mode": r.cfg.Mode, "all_warehouses": r.cfg.AllWarehouses,
		"keying_thinking": r.cfg.Keying, "seed": r.cfg.Seed,
		"c_run": map[string]int{"c_last": r.cfg.C.Last, "c_id": r.cfg.C.ID, "ol_i_id": r.cfg.C.ItemID},
	}
}

// Mark reads sum(d_next_o_id), which only committed New-Orders advance,
// and the database's transaction counter where it keeps one, with when the
// server started where a restart resets that counter. A lost connection is
// reopened, so that a server restarted mid-window still gives the window's
// end.
func (r *runner) Mark(ctx context.Context) (workload.Mark, error) {
	v := map[string]int64{}
	err := workload.MarkServer(ctx, r.t, v, r.ctl, func() error {
		var next int64
		if err := r.ctl.ReadRow(ctx, r.schema.Get("mark"), &next); err != nil {
			return fmt.Errorf("read sum(d_next_o_id): %w", err)
		}
		v["d_next_o_id"] = next
		return nil
	})
	if err != nil {
		return workload.Mark{}, err
	}
	return workload.Mark{Values: v}, nil
}

func (r *runner) Progress(counts []int64) string {
	v := r.Rates(counts)
	return fmt.Sprintf("NOPM %6.0f  TPM %7.0f", v[metricNOPM], v[metricTPM])
}

// Rates counts the New-Orders that rolled back as the spec intends, which
// the summary leaves out: one second's completions do not tell them apart.
func (r *runner) Rates(counts []int64) map[string]float64 {
	var all int64
	for _, c := range counts {
		all += c
	}
	return map[string]float64{metricNOPM: float64(counts[txNewOrder]) * 60, metricTPM: float64(all) * 60}
}

func (r *runner) Summarize(res *driver.Result, start, end workload.Mark) workload.Summary {
	var nopmClient, tpmClient float64
	minutes := res.WindowSeconds() / 60
	if minutes > 0 {
		var all int64
		for _, tx := range res.Tx {
			all += tx.Count
		}
		nopmClient = float64(res.Tally[tNewOrders]-res.Tally[tRollbacks]) / minutes
		tpmClient = float64(all) / minutes
	}
	nopm, tpm := workload.Value{Client: &nopmClient}, workload.Value{Client: &tpmClient}
	// sum(d_next_o_id) is table data, which a restart does not reset.
	var nopmReset, tpmReset workload.Gap
	nopm.DB, nopmReset = perMinute(workload.Rate(start, end, "d_next_o_id", false))
	tpm.DB, tpmReset = perMinute(workload.Rate(start, end, workload.Xacts, true))
	s := workload.Summary{Values: map[string]workload.Value{metricNOPM: nopm, metricTPM: tpm}}
	s.Lines = append(s.Lines, workload.Agreement("NOPM", nopm.DB, nopmReset, nopmClient), workload.Agreement("TPM", tpm.DB, tpmReset, tpmClient))
	if r.cfg.Keying {
		base := nopmClient
		if nopm.DB != nil {
			base = *nopm.DB
		}
		s.Extra = map[string]any{"efficiency_pct": efficiency(base, r.cfg.Warehouses)}
		s.Lines = append(s.Lines, efficiencyLine(base, r.cfg.Warehouses, res.WindowSeconds()))
	}
	s.Audit = audit(res, r.cfg.Warehouses)
	return s
}

// efficiency is NOPM as a percentage of what the warehouses' terminals
// can enter at most with keying and think times.
func efficiency(nopm float64, warehouses int) float64 {
	return nopm / (maxKeyedNOPM * float64(warehouses)) * 100
}

// efficiencyLine says the efficiency, and why when it is over 100%: with
// at most the specification's terminals that is only the think times,
// which are random, coming out short of their mean over a short window.
func efficiencyLine(nopm float64, warehouses int, seconds float64) string {
	eff := efficiency(nopm, warehouses)
	line := fmt.Sprintf("Efficiency %.1f%% of the %.2f NOPM per warehouse that keying and think times allow", eff, maxKeyedNOPM)
	if eff > 100 {
		line += fmt.Sprintf(" (over 100%%: think times are random, and this %.0f s window holds too few of each terminal's to average out; run longer for a steady figure)", seconds)
	}
	return line
}

// perMinute turns a rate per second into one per minute.
func perMinute(perSecond *float64, gap workload.Gap) (*float64, workload.Gap) {
	if perSecond != nil {
		*perSecond *= 60
	}
	return perSecond, gap
}

func (r *runner) Close() error { return r.ctl.Close() }
