package tprocc

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

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
	// cLoad is the build's C_LAST constant, which the run's must keep
	// away from whatever the seed.
	cLoad int
	// terminals and sessions count what the driver made: a virtual user
	// is one of each. The per-terminal efficiency divides by the first,
	// the mix audit asks each of the second for a deck's worth.
	terminals, sessions atomic.Int64
}

// CheckRun refuses run flags that do not go together (workload.RunChecker).
func (w *tprocc) CheckRun() error {
	switch {
	case w.perWarehouse < 1:
		return exitcode.Userf("--terminals-per-warehouse must be at least 1, got %d", w.perWarehouse)
	case w.perWarehouse != terminalsPerWarehouse && !w.keying:
		return exitcode.Userf("--terminals-per-warehouse applies to keyed runs: add --keying-thinking, or leave it out")
	}
	return nil
}

func (w *tprocc) Open(ctx context.Context, t dbtarget.Target) (workload.Run, error) {
	if err := w.CheckRun(); err != nil {
		return nil, err
	}
	o, err := workload.OpenRun(ctx, t, sqlFiles, w.mode, "tx.sql", readMeta)
	if err != nil {
		return nil, err
	}
	r := &runner{t: t, schema: o.Schema, ctl: &o.Conn, cLoad: o.Meta.cLoad, cfg: runConfig{
		Warehouses: o.Meta.warehouses, Mode: o.Mode, AllWarehouses: w.allWarehouses, Keying: w.keying,
		PerWarehouse: w.perWarehouse, Q: o.SQL,
	}}
	r.Reseed(workload.RunSeed())
	return r, nil
}

var _ workload.Seeded = (*runner)(nil)

func (r *runner) Seed() uint64 { return r.cfg.Seed }

// Reseed sets the seed of the terminals' streams and draws the run-time
// NURand constants from it.
func (r *runner) Reseed(seed uint64) {
	r.cfg.Seed, r.cfg.C = seed, runConstants(seed, r.cLoad)
}

var _ workload.Resummarizer = (*tprocc)(nil)

// Resummarize summarizes f with a runner made from its config: the
// warehouses and keyed shape the efficiency and the audit take, with
// the whole run's terminals and sessions.
func (w *tprocc) Resummarize(f workload.Figures) (workload.Summary, error) {
	c := workload.ReadConfig(f.Config)
	r := &runner{cfg: runConfig{
		Warehouses: c.Int("warehouses"), Mode: c.String("mode"), AllWarehouses: c.Bool("all_warehouses"),
		Keying: c.Bool("keying_thinking"), PerWarehouse: c.Int("terminals_per_warehouse"),
	}}
	r.terminals.Store(int64(f.Terminals))
	r.sessions.Store(int64(f.Sessions))
	return workload.Resummarize(r, f, c)
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
// enter at most with the specification's keying and think times, and
// nopmPerTerminal one terminal's share.
const (
	maxKeyedNOPM    = 12.86
	nopmPerTerminal = maxKeyedNOPM / terminalsPerWarehouse
)

var _ workload.VULimiter = (*runner)(nil)

// CheckVUs refuses a keyed run of more virtual users than
// --terminals-per-warehouse allows, the specification's ten by default:
// more would no longer be its shape, the efficiency would pass 100% and
// the mix audit fail.
func (r *runner) CheckVUs(vus int) error {
	// A limit past int's range is none: the product must not wrap round.
	limit := math.MaxInt
	if r.cfg.PerWarehouse <= math.MaxInt/max(r.cfg.Warehouses, 1) {
		limit = r.cfg.PerWarehouse * r.cfg.Warehouses
	}
	if !r.cfg.Keying || vus <= limit {
		return nil
	}
	warehouses := fmt.Sprintf("%d warehouses", r.cfg.Warehouses)
	if r.cfg.Warehouses == 1 {
		warehouses = "1 warehouse"
	}
	if r.cfg.PerWarehouse != terminalsPerWarehouse {
		return exitcode.Userf("--keying-thinking with %d VUs on %s is more than --terminals-per-warehouse %d allows: use --vus %d or fewer, or a larger --terminals-per-warehouse",
			vus, warehouses, r.cfg.PerWarehouse, limit)
	}
	return exitcode.Userf("--keying-thinking with %d VUs on %s is more than the specification's %d terminals a warehouse (clause 4.2.2): use --vus %d or fewer, or --terminals-per-warehouse M for a scale test (not the specification's shape)",
		vus, warehouses, terminalsPerWarehouse, limit)
}

var _ workload.Affine = (*runner)(nil)

// Affinity keys a VU by its home warehouse: on a cluster whose nodes all
// take writes, a warehouse's districts, stock and customers are then
// written on one node, where its VUs wait for each other's locks instead
// of failing each other's certification at commit. Only remote order
// lines (1%) and remote Payments (15%) still cross.
func (r *runner) Affinity() (string, func(id int) int) {
	return "warehouse", func(id int) int { return homeOf(&r.cfg, id) - 1 }
}

func (r *runner) TxNames() []string    { return txNames }
func (r *runner) TallyNames() []string { return tallyNames }

func (r *runner) NewVU(ctx context.Context, id int) (driver.VU, error) {
	r.terminals.Add(1)
	r.sessions.Add(1)
	return newVU(ctx, r.t, &r.cfg, id)
}

// NewTerminal and NewSession are the two halves of a virtual user, for a
// driver that lends a pool of sessions to many terminals.
func (r *runner) NewTerminal(id int) driver.Terminal {
	r.terminals.Add(1)
	tm := newTerminal(&r.cfg, id)
	return &tm
}

func (r *runner) NewSession(ctx context.Context, _ int) (driver.Session, error) {
	r.sessions.Add(1)
	s, err := openSession(ctx, r.t, &r.cfg)
	if err != nil {
		return nil, err
	}
	return pooled{s}, nil
}

// pooled is a session lent to the driver's terminals, which are this
// workload's own.
type pooled struct{ *session }

func (p pooled) Run(ctx context.Context, term driver.Terminal, tx int, t driver.Tally) error {
	return p.run(ctx, term.(*terminal), tx, t)
}

var _ driver.Pooled = (*runner)(nil)

func (r *runner) Config() map[string]any {
	return map[string]any{
		"warehouses": r.cfg.Warehouses, "mode": r.cfg.Mode, "all_warehouses": r.cfg.AllWarehouses,
		"keying_thinking": r.cfg.Keying, "terminals_per_warehouse": r.cfg.PerWarehouse, "seed": r.cfg.Seed,
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
	return workload.MarkServer(ctx, r.t, v, r.ctl, func() error {
		var next int64
		if err := r.ctl.ReadRow(ctx, r.schema.Get("mark"), &next); err != nil {
			return fmt.Errorf("read sum(d_next_o_id): %w", err)
		}
		v["d_next_o_id"] = next
		return nil
	})
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
	nopm := workload.Value{Client: &nopmClient, Tolerance: workload.Tolerance}
	tpm := workload.Value{Client: &tpmClient, Tolerance: workload.Tolerance}
	// sum(d_next_o_id) is table data, which neither a restart resets nor
	// a failover loses where the standby had it.
	nopmDB := workload.Rate(start, end, "d_next_o_id", false).Times(60)
	xacts, retried := workload.Rate(start, end, workload.Xacts, true).LessRetries(res, res.WindowSeconds())
	tpmDB := xacts.Times(60)
	nopm.DB, tpm.DB = nopmDB.Value, tpmDB.Value
	s := workload.Summary{Values: map[string]workload.Value{metricNOPM: nopm, metricTPM: tpm}}
	s.Lines = append(s.Lines, workload.Agreement("NOPM", nopmDB, nopmClient), workload.Agreement("TPM", tpmDB, tpmClient))
	if retried != "" {
		s.Lines = append(s.Lines, "TPM: "+retried)
	}
	if r.cfg.Keying {
		// On the figure that stands for NOPM (result's headline): the
		// database's, unless other clients' New-Orders swelled it.
		base := nopmClient
		if nopm.DB != nil && !nopm.Disagree() {
			base = *nopm.DB
		}
		sh := r.shape()
		s.Extra = map[string]any{"efficiency_pct": sh.efficiency(base)}
		if !sh.spec() {
			s.Extra["efficiency_basis"] = "per_terminal"
			s.Extra["terminals_per_warehouse"] = sh.perWarehouse
		}
		s.Lines = append(s.Lines, sh.efficiencyLine(base, res.WindowSeconds()))
	}
	s.Audit = audit(res, r.cfg.Warehouses, int(r.sessions.Load()))
	return s
}

// shape is how a keyed run puts its terminals on the warehouses.
type shape struct{ warehouses, perWarehouse, terminals int }

func (r *runner) shape() shape {
	return shape{warehouses: r.cfg.Warehouses, perWarehouse: r.cfg.PerWarehouse, terminals: int(r.terminals.Load())}
}

// spec says the shape is the specification's ten terminals a warehouse.
func (sh shape) spec() bool { return sh.perWarehouse == terminalsPerWarehouse }

// efficiency is NOPM as a percentage of what the terminals can enter at
// most with keying and think times: the warehouses' in the
// specification's shape, else the terminals' run, 1.286 NOPM each.
func (sh shape) efficiency(nopm float64) float64 {
	if sh.spec() {
		return nopm / (maxKeyedNOPM * float64(sh.warehouses)) * 100
	}
	return nopm / (nopmPerTerminal * float64(max(sh.terminals, 1))) * 100
}

// efficiencyLine says the efficiency and its basis; outside the
// specification's shape that it is not the specification's; and why it
// is over 100% when it is: with at most the terminals the shape allows
// that is only the think times, which are random, coming out short of
// their mean over a short window.
func (sh shape) efficiencyLine(nopm float64, seconds float64) string {
	eff := sh.efficiency(nopm)
	line := fmt.Sprintf("Efficiency %.1f%% of the %.2f NOPM per warehouse that keying and think times allow", eff, maxKeyedNOPM)
	if !sh.spec() {
		line = fmt.Sprintf("Efficiency %.1f%% of the %.3f NOPM per terminal that keying and think times allow, over %d terminals, %d a warehouse: not the specification's %d",
			eff, nopmPerTerminal, sh.terminals, sh.perWarehouse, terminalsPerWarehouse)
	}
	if eff > 100 {
		line += fmt.Sprintf(" (over 100%%: think times are random, and this %.0f s window holds too few of each terminal's to average out; run longer for a steady figure)", seconds)
	}
	return line
}

func (r *runner) Close() error { return r.ctl.Close() }
