package dvdstore

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
)

func init() {
	workload.Register(Name, func() workload.Workload { return newDVDStore() })
}

var (
	_ workload.Builder        = (*dvdstore)(nil)
	_ workload.BuildEstimator = (*dvdstore)(nil)
	_ workload.Dropper        = (*dvdstore)(nil)
	_ workload.Checker        = (*dvdstore)(nil)
	_ workload.RunChecker     = (*dvdstore)(nil)
	_ workload.Rater          = (*runner)(nil)
)

// The steps of an order, in the order of the names the driver reports.
const (
	stepLogin = iota
	stepNewCustomer
	stepBrowse
	stepPurchase
)

var stepNames = []string{"login", "new_customer", "browse", "purchase"}

// Tally slots.
const (
	tOrders    = iota // purchases made, committed or rolled back
	tRollbacks        // of which rolled back on a product out of stock
	tLines            // order lines in committed purchases
	tOrderUs          // the steps' time of every finished order, in µs
)

var tallyNames = []string{"orders", "rollbacks", "order_lines", "order_us"}

// Metric keys.
const (
	metricOPM      = "orders_per_minute"
	metricNewOPM   = "new_orders_per_minute"
	metricRollback = "rollback_pct"
	metricOrderMs  = "order_ms"
)

func (w *dvdstore) Name() string { return Name }

var _ workload.Exampler = (*dvdstore)(nil)

// Examples are the run command's examples.
func (w *dvdstore) Examples() []string {
	return []string{
		"dbrig run dvd-store",
		"dbrig build dvd-store --target postgres://bench@localhost/bench --size M",
		"dbrig run dvd-store --target postgres://bench@localhost/bench --vus 10 --think 0.5s --mode sql",
		"dbrig run dvd-store --target postgres://bench@localhost/bench --vus 5 --with dvd-reports:2   # the reports beside the orders",
		"dbrig run dvd-store --target postgres://bench@localhost/bench --vus 0 --with dvd-reports:2   # the reports alone",
	}
}

func (w *dvdstore) Info() workload.Info {
	return workload.Info{
		Metrics: []workload.Metric{
			{Key: metricOPM, Label: "orders per minute", Unit: "orders/min, rolled back too", HigherIsBetter: true},
			{Key: metricNewOPM, Label: "new orders per minute", Unit: "committed/min", HigherIsBetter: true},
			{Key: metricOrderMs, Label: "order response time", Unit: "ms"},
			{Key: metricRollback, Label: "rollbacks", Unit: "% of orders"},
		},
		Primary:   metricOPM,
		PrimaryTx: stepNames[stepPurchase],
	}
}

// runOptions are the order flow's: each a mean, drawn as in the original
// from 1 to twice the mean less one.
type runOptions struct {
	mode                       string
	think                      time.Duration
	pctNew                     int
	searches, batch, lineItems int
}

func (w *dvdstore) RunFlags(fs *pflag.FlagSet) {
	o := &w.run
	fs.StringVar(&o.mode, "mode", o.mode, `"procs" (one stored-function call per step) or "sql" (client statements); default procs where the database has stored routines`)
	fs.DurationVar(&o.think, "think", o.think, "mean think time after each order, drawn from U(0, 2 x think)")
	fs.IntVar(&o.pctNew, "pct-new-customers", o.pctNew, "% of orders by a customer who registers first")
	fs.IntVar(&o.searches, "n-searches", o.searches, "mean browses an order makes (1 to 2n-1)")
	fs.IntVar(&o.batch, "search-batch", o.batch, "mean rows a browse asks for (1 to 2n-1)")
	fs.IntVar(&o.lineItems, "n-line-items", o.lineItems, "mean items an order buys (1 to 2n-1, at most 9)")
}

// runConfig is what every virtual user of a run shares, read-only.
type runConfig struct {
	runOptions
	scale scale
	seed  uint64
	q     workload.SQLFile
	// takeWrite takes the stock that take_stock read and locked, in a
	// dialect without UPDATE ... RETURNING (write:take_stock); "" where
	// take_stock takes it itself.
	takeWrite string
	// hot is every product id once and each hot seller nine times more,
	// so a cart draws hot sellers ten times as often.
	hot []int64
}

// runner is an opened order-entry run.
type runner struct {
	// Halves makes the virtual users, pooled or not.
	workload.Halves[*terminal, *session]
	t   dbtarget.Target
	cfg runConfig
	ctl *workload.Conn
}

// maxMean is the largest mean a count drawn from 1 to 2n-1 may have, so
// that 2n-1 is a 32-bit integer.
const maxMean = 1 << 30

func (o runOptions) validate() error {
	switch {
	case o.pctNew < 0 || o.pctNew > 100:
		return exitcode.Userf("--pct-new-customers must be 0 to 100, got %d", o.pctNew)
	case o.searches < 1 || o.batch < 1:
		return exitcode.Userf("--n-searches and --search-batch must be at least 1")
	// Each is drawn from 1 to 2n-1, and a browse's batch is the
	// database's 32-bit int.
	case o.searches > maxMean || o.batch > maxMean:
		return exitcode.Userf("--n-searches and --search-batch must be at most %d (each is drawn from 1 to 2n-1, and a browse's batch is a 32-bit integer), got %d and %d",
			maxMean, o.searches, o.batch)
	case o.lineItems < 1 || o.lineItems > 5:
		return exitcode.Userf("--n-line-items must be 1 to 5 (an order holds at most 9 lines), got %d", o.lineItems)
	case o.think < 0:
		return exitcode.Userf("--think must not be negative")
	}
	return nil
}

// CheckRun checks the run options, which need no database
// (workload.RunChecker).
func (w *dvdstore) CheckRun() error { return w.run.validate() }

func (w *dvdstore) Open(ctx context.Context, t dbtarget.Target) (workload.Run, error) {
	if err := w.CheckRun(); err != nil {
		return nil, err
	}
	o, err := workload.OpenRun(ctx, t, sqlFiles, w.run.mode, "order.sql", readMeta)
	if err != nil {
		return nil, err
	}
	m := o.Meta
	cfg := runConfig{runOptions: w.run, scale: m.scale, q: o.SQL, takeWrite: o.SQL["write:take_stock"]}
	cfg.mode = o.Mode
	for id := int64(1); id <= m.scale.Products; id++ {
		cfg.hot = append(cfg.hot, id)
		if id%hotEvery == 0 {
			for range 9 {
				cfg.hot = append(cfg.hot, id)
			}
		}
	}
	r := &runner{t: t, cfg: cfg, ctl: &o.Conn}
	r.Halves = workload.Halves[*terminal, *session]{
		Terminal: func(id int) *terminal { tm := newTerminal(&r.cfg, id); return &tm },
		Open:     func(ctx context.Context) (*session, error) { return openSession(ctx, r.t, &r.cfg) },
	}
	r.Reseed(workload.RunSeed())
	return r, nil
}

var _ workload.Seeded = (*runner)(nil)

func (r *runner) Seed() uint64 { return r.cfg.seed }

// Reseed sets the seed of the terminals' streams, the run's only draw.
func (r *runner) Reseed(seed uint64) { r.cfg.seed = seed }

var _ workload.Resummarizer = (*dvdstore)(nil)

// Resummarize summarizes f with a runner of no options: the summary
// takes none, only the figures and the marks.
func (w *dvdstore) Resummarize(f workload.Figures) (workload.Summary, error) {
	return workload.Resummarize(&runner{}, f, workload.ReadConfig(f.Config))
}

func (r *runner) TxNames() []string    { return stepNames }
func (r *runner) TallyNames() []string { return tallyNames }

var _ driver.Pooled = (*runner)(nil)

func (r *runner) Config() map[string]any {
	c := r.cfg
	return map[string]any{
		"mode": c.mode, "customers": c.scale.Customers, "products": c.scale.Products, "orders_per_month": c.scale.OrdersPerMonth,
		"think": c.think.String(), "pct_new_customers": c.pctNew, "n_searches": c.searches, "search_batch": c.batch,
		"n_line_items": c.lineItems, "seed": c.seed,
	}
}

// Mark reads the target's own counters and the orders the database holds.
func (r *runner) Mark(ctx context.Context) (workload.Mark, error) {
	v := map[string]int64{}
	return workload.MarkServer(ctx, r.t, v, r.ctl, func() error {
		var n int64
		if err := r.ctl.ReadRow(ctx, r.cfg.q.Get("mark"), &n); err != nil {
			return fmt.Errorf("count the orders: %w", err)
		}
		v["orders"] = n
		return nil
	})
}

func (r *runner) Progress(counts []int64) string {
	return fmt.Sprintf("orders/min %6.0f", r.Rates(counts)[metricOPM])
}

func (r *runner) Rates(counts []int64) map[string]float64 {
	return map[string]float64{metricOPM: float64(counts[stepPurchase]) * 60}
}

// Summarize: orders per minute on the client's side counts every
// purchase, rolled back or not, as the original does; the database's side
// is the committed orders it gained, so the two differ by the rollbacks.
func (r *runner) Summarize(res *driver.Result, start, end workload.Mark) workload.Summary {
	orders, rollbacks := res.Tally[tOrders], res.Tally[tRollbacks]
	var opm, rb, ms float64
	if w := res.WindowSeconds(); w > 0 {
		opm = float64(orders) * 60 / w
	}
	if orders > 0 {
		rb = float64(rollbacks) / float64(orders) * 100
		ms = float64(res.Tally[tOrderUs]) / float64(orders) / 1000
	}
	committed := workload.Rate(start, end, "orders", false).Times(60)
	committedClient := opm * (1 - rb/100)
	s := workload.Summary{Values: map[string]workload.Value{
		metricOPM:      {Client: &opm},
		metricNewOPM:   {DB: committed.Value, Client: &committedClient, Tolerance: workload.Tolerance},
		metricRollback: {Client: &rb},
		metricOrderMs:  {Client: &ms},
	}}
	s.Lines = append(s.Lines, workload.Agreement("New orders per minute", committed, committedClient))
	return s
}

func (r *runner) Close() error { return r.ctl.Close() }
