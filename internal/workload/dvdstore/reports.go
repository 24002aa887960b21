package dvdstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
)

// ReportsName is the report workload's name: the category-sales requests
// of the 2004 study's second driver, on DVD Store's schema.
const ReportsName = "dvd-reports"

func init() {
	workload.Register(ReportsName, func() workload.Workload { return &reports{dvdstore: newDVDStore()} })
}

// reports builds, checks and drops the DVD Store schema as dvd-store does;
// it runs report requests instead of orders.
type reports struct {
	*dvdstore
	mode string
}

var _ workload.Builder = (*reports)(nil)

func (w *reports) Name() string { return ReportsName }

// Metric keys.
const (
	metricCompletion = "completion_ms"
	metricPerHour    = "requests_per_hour"
)

func (w *reports) Info() workload.Info {
	return workload.Info{
		Metrics: []workload.Metric{
			{Key: metricCompletion, Label: "completion time", Unit: "ms, mean"},
			{Key: metricPerHour, Label: "requests per hour", Unit: "per hour", HigherIsBetter: true},
		},
		Primary:   metricCompletion,
		PrimaryTx: reportTx[0],
	}
}

// Examples are the run command's examples, the reports' own rather than
// the dvd-store ones its embedded dvdstore would give.
func (w *reports) Examples() []string {
	return []string{
		"dbrig run dvd-reports --vus 2 --duration 1m",
		"dbrig run dvd-reports --target postgres://bench@localhost/bench --vus 4 --json reports.json   # then: dbrig check dvd-reports --result reports.json",
	}
}

func (w *reports) RunFlags(fs *pflag.FlagSet) {
	fs.StringVar(&w.mode, "mode", w.mode, `"procs" (one stored-function call per request) or "sql" (a client statement); default procs where the database has stored routines`)
}

var reportTx = []string{"category_sales"}

// window is a report's dates: the first days of the anchor's month,
// quarter and half-year (its month and the two, or five, before), and the
// anchor.
type window struct {
	month, quarter, half, anchor time.Time
}

func windowOf(anchor time.Time) window {
	first := func(back int) time.Time {
		return time.Date(anchor.Year(), anchor.Month()-time.Month(back), 1, 0, 0, 0, 0, time.UTC)
	}
	return window{first(0), first(2), first(5), anchor}
}

// latest is the latest order date a build loaded: the last month's
// orders hold it.
func latest(seed uint64, s scale) time.Time {
	var o order
	var last time.Time
	for id := s.Orders() - s.OrdersPerMonth + 1; id <= s.Orders(); id++ {
		genOrder(seed, s, id, &o)
		if o.Date.After(last) {
			last = o.Date
		}
	}
	return last
}

// reportRun is an opened report run.
type reportRun struct {
	t     dbtarget.Target
	query string
	win   window
	seed  uint64
	mode  string
	// data is the build the reports read, which the kept table records.
	data meta
}

func (w *reports) Open(ctx context.Context, t dbtarget.Target) (workload.Run, error) {
	o, err := workload.OpenRun(ctx, t, sqlFiles, w.mode, "report.sql", readMeta)
	if err != nil {
		return nil, err
	}
	// The reports read no marks of their own: the record was all.
	o.Close()
	mode, m := o.Mode, o.Meta
	query := o.SQL.Get("report")
	if mode == workload.ModeProcs {
		query = o.SQL.Get("call:report")
	}
	return &reportRun{t: t, query: query, win: windowOf(latest(m.seed, m.scale)), seed: workload.RunSeed(), mode: mode, data: m}, nil
}

// rand is virtual user id's stream of categories.
func (r *reportRun) rand(id int) *workload.Rand {
	return workload.NewRand(workload.Mix(r.seed, uint64(id)), 0xD53)
}

func (r *reportRun) TxNames() []string    { return reportTx }
func (r *reportRun) TallyNames() []string { return reportTallies }

func (r *reportRun) NewVU(ctx context.Context, id int) (driver.VU, error) {
	v := &reportVU{Conn: workload.Conn{T: r.t}, run: r, r: r.rand(id), first: make([][3]int64, len(categories)+1)}
	if err := v.Reconnect(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// Config holds, besides the run's own options, the build the reports
// read, so that a merge can make the kept table again.
func (r *reportRun) Config() map[string]any {
	m := r.data
	return map[string]any{"mode": r.mode, "anchor": day(r.win.anchor), "seed": r.seed,
		"data_seed": strconv.FormatUint(m.seed, 10), "customers": m.scale.Customers, "products": m.scale.Products,
		"orders_per_month": m.scale.OrdersPerMonth}
}

var _ workload.Seeded = (*reportRun)(nil)

func (r *reportRun) Seed() uint64 { return r.seed }

// Reseed sets the seed of the categories' draws, the run's only one.
func (r *reportRun) Reseed(seed uint64) { r.seed = seed }

var _ workload.Resummarizer = (*reports)(nil)

// Resummarize summarizes f with a report run rebuilt from its config:
// the window and the build, which the kept table records.
func (w *reports) Resummarize(f workload.Figures) (workload.Summary, error) {
	c := workload.ReadConfig(f.Config)
	r := &reportRun{mode: c.String("mode"), seed: uint64(c.Int("seed")),
		data: meta{scale: scale{Customers: int64(c.Int("customers")), Products: int64(c.Int("products")),
			OrdersPerMonth: int64(c.Int("orders_per_month"))}}}
	anchor, err := time.Parse(time.DateOnly, c.String("anchor"))
	if c.Err() == nil && err != nil {
		return workload.Summary{}, fmt.Errorf("config anchor: %w", err)
	}
	r.win = windowOf(anchor)
	if r.data.seed, err = strconv.ParseUint(c.String("data_seed"), 10, 64); c.Err() == nil && err != nil {
		return workload.Summary{}, fmt.Errorf("config data_seed: %w", err)
	}
	return workload.Resummarize(r, f, c)
}

// Mark reads the target's own counters; the reports write nothing to count.
func (r *reportRun) Mark(ctx context.Context) (workload.Mark, error) {
	return workload.MarkServer(ctx, r.t, map[string]int64{}, nil, nil)
}

func (r *reportRun) Progress(counts []int64) string {
	return fmt.Sprintf("requests/h %8.0f", r.Rates(counts)[metricPerHour])
}

func (r *reportRun) Rates(counts []int64) map[string]float64 {
	return map[string]float64{metricPerHour: float64(counts[0]) * 3600}
}

func (r *reportRun) Summarize(res *driver.Result, _, _ workload.Mark) workload.Summary {
	tx := res.Tx[0]
	var mean, perHour float64
	if w := res.WindowSeconds(); w > 0 {
		perHour = float64(tx.Count) * 3600 / w
	}
	s := workload.Summary{Values: map[string]workload.Value{metricPerHour: {Client: &perHour}}}
	if tx.Count > 0 && tx.Hist != nil {
		mean = tx.Hist.Mean() / 1000
		s.Values[metricCompletion] = workload.Value{Client: &mean}
		s.Lines = append(s.Lines, fmt.Sprintf("Completion time: mean %.2f ms, min %.2f, p95 %.2f, max %.2f; windows to %s from %s, %s and %s",
			mean, float64(tx.Hist.Min())/1000, float64(tx.Hist.ValueAtQuantile(95))/1000, float64(tx.Hist.Max())/1000,
			r.win.anchor.Format(time.DateOnly), r.win.month.Format(time.DateOnly), r.win.quarter.Format(time.DateOnly), r.win.half.Format(time.DateOnly)))
	}
	if t := newSalesTable(r.win, r.data, res.Tally); len(t.Rows) > 0 {
		s.Extra = map[string]any{salesKey: t}
		s.Lines = append(s.Lines, t.lines()...)
	}
	return s
}

func (r *reportRun) Close() error { return nil }

// reportVU asks for one category's sales after another.
type reportVU struct {
	workload.Conn
	run *reportRun
	r   *workload.Rand
	cat int
	// sales are the last request's month, quarter and half-year.
	sales [3]float64
	// first is this user's first answer by category (index 1 to 16), in
	// cents, which the others should repeat.
	first [][3]int64
}

func (v *reportVU) Next() int {
	v.cat = v.r.Int(1, len(categories))
	return 0
}

func (v *reportVU) Run(ctx context.Context, _ int, tally driver.Tally) error {
	w := v.run.win
	if err := v.S.QueryRow(ctx, v.run.query, v.cat, w.month, w.quarter, w.half, w.anchor).Scan(&v.sales[0], &v.sales[1], &v.sales[2]); err != nil {
		return err
	}
	c := toCents(v.sales)
	tally[salesSlot(v.cat, 0)]++
	for k, cents := range c {
		tally[salesSlot(v.cat, k+1)] += cents
	}
	switch first := &v.first[v.cat]; {
	case *first == [3]int64{}:
		*first = c
	case *first != c:
		tally[tDiffered]++
	}
	return nil
}
