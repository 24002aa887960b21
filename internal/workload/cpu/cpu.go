// Package cpu is the CPU test of the C-state and turbo study: one loop,
// n := mod(n, 999999) + sqrt(f) for f in 1..10,000,000, run inside the
// database on one core per session. Printed to two decimals its result must
// be 873729.72; a loop that returns anything else ends the run as an error,
// never as a timing. It needs no schema: each session brings its own loop.
package cpu

import (
	"context"
	"embed"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
)

//go:embed sql
var sqlFiles embed.FS

// Name is the workload's name on the command line.
const Name = "cpu"

// Loops is the study's loop count, for which the result is known.
const (
	Loops  = 10_000_000
	Result = "873729.72"
)

// Arithmetic kinds.
const (
	arithNumeric = "numeric"
	arithFloat   = "float"
)

// Metric keys.
const (
	metricSeconds = "seconds_per_loop"
	metricRate    = "loops_per_minute"
)

// Roughly how long one loop of Loops takes on a 2-core VM's PostgreSQL, for
// a sweep's plan.
var perLoop = map[string]time.Duration{arithNumeric: 5500 * time.Millisecond, arithFloat: 1300 * time.Millisecond}

func init() {
	workload.Register(Name, func() workload.Workload {
		return &cpu{sessions: 1, loops: Loops, arith: arithNumeric, repeat: 1}
	})
}

var (
	_ workload.RunEstimator = (*cpu)(nil)
	_ workload.Exampler     = (*cpu)(nil)
	_ workload.RunChecker   = (*cpu)(nil)
	_ workload.Batch        = (*run)(nil)
	_ workload.Preparer     = (*run)(nil)
)

// cpu holds the options its flags bind to.
type cpu struct {
	sessions, loops, repeat int
	arith                   string
}

func (w *cpu) Name() string { return Name }

func (w *cpu) Info() workload.Info {
	return workload.Info{
		Metrics: []workload.Metric{
			{Key: metricSeconds, Label: "seconds per loop", Unit: "s (median)"},
			{Key: metricRate, Label: "loops per minute", Unit: "all sessions", HigherIsBetter: true},
		},
		Primary:   metricSeconds,
		PrimaryTx: txLoop,
		FixedWork: true,
	}
}

func (w *cpu) RunFlags(fs *pflag.FlagSet) {
	fs.IntVar(&w.sessions, "sessions", w.sessions, "loops run at once, each in its own session")
	fs.IntVar(&w.loops, "loops", w.loops, "iterations of the loop; the result is known for 10000000")
	fs.StringVar(&w.arith, "arith", w.arith, `"numeric" (decimal arithmetic, like Oracle's NUMBER) or "float" (float8)`)
	fs.IntVar(&w.repeat, "repeat", w.repeat, "loops each session runs, one after another")
}

// Examples are the run command's examples.
func (w *cpu) Examples() []string {
	return []string{
		"dbrig run cpu",
		"dbrig run cpu --target postgres://bench@localhost/bench --arith float",
		"dbrig run cpu --target postgres://bench@localhost/bench --sessions 2 --repeat 3 --json cpu.json",
	}
}

// RunTime is the plan's estimate: a set of loops per repetition, as many
// sets in a row as the sessions need cores, plus the one-session reference.
func (w *cpu) RunTime() time.Duration {
	per := perLoop[w.arith].Seconds() * float64(w.loops) / Loops
	sets := float64(w.repeat) * math.Ceil(float64(w.sessions)/float64(runtime.NumCPU()))
	if w.sessions > 1 {
		sets++
	}
	return workload.Estimate(per * sets)
}

// CheckRun checks the options that need no database (workload.RunChecker).
func (w *cpu) CheckRun() error {
	switch {
	case w.sessions < 1:
		return exitcode.Userf("--sessions must be at least 1, got %d", w.sessions)
	case w.loops < 1:
		return exitcode.Userf("--loops must be at least 1, got %d", w.loops)
	case w.repeat < 1:
		return exitcode.Userf("--repeat must be at least 1, got %d", w.repeat)
	case w.loops > math.MaxInt32:
		return exitcode.Userf("--loops must be at most %d, the loop's count being a 32-bit integer in the database, got %d", math.MaxInt32, w.loops)
	case w.arith != arithNumeric && w.arith != arithFloat:
		return exitcode.Userf("--arith %q: use numeric or float", w.arith)
	}
	if err := workload.CheckMemory(fmt.Sprintf("--sessions %d", w.sessions), w.sessions, driver.HolderBytes(1), "sessions, with their histograms,"); err != nil {
		return err
	}
	// Each session keeps every loop's result until the run is over.
	return workload.CheckMemory(fmt.Sprintf("--repeat %d", w.repeat), w.repeat, int64(w.sessions)*int64(unsafe.Sizeof(loopResult{})),
		fmt.Sprintf("repetitions, a loop's result each for %s,", human.Count(w.sessions, "session")))
}

// Open checks the options and that the database has what the loop needs.
func (w *cpu) Open(ctx context.Context, t dbtarget.Target) (workload.Run, error) {
	if err := w.CheckRun(); err != nil {
		return nil, err
	}
	q, err := workload.LoadSQL(sqlFiles, "sql", t.Dialect(), "cpu.sql")
	if err != nil {
		return nil, exitcode.Userf("%s has no CPU loop for %s databases", Name, t.Kind())
	}
	r := &run{t: t, opt: *w, arith: w.arith, q: q}
	if _, ok := q["loop_"+w.arith]; !ok {
		r.arith = arithFloat
		r.notes = append(r.notes, fmt.Sprintf("%s has no decimal arithmetic: --arith %s ran in float8", t.Kind(), w.arith))
	}
	r.loop = q.Get("loop_" + r.arith)
	if check, ok := q["functions"]; ok {
		s, err := t.Session(ctx)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		var a, b float64
		var own bool
		if err := s.QueryRow(ctx, check).Scan(&a, &b, &own); err != nil {
			return nil, exitcode.Userf("%s lacks the math functions the loop needs (%v)", t.URL(), human.OneLine(err))
		}
		r.functions = functionsOwn
		line := fmt.Sprintf("Math functions: %s's own", t.Kind())
		if !own {
			r.functions = functionsApp
			line = fmt.Sprintf("Math functions: registered from Go, as this build of %s lacks its own: a Go callback per call, slower than its C functions, so the figure is not comparable with one that used them", t.Kind())
		}
		r.notes = append(r.notes, line)
	}
	return r, nil
}

// Where the loop's math functions came from, for a database that checks
// them: its own, or functions the application registered in its place.
const (
	functionsOwn = "database"
	functionsApp = "application"
)

// txLoop is the one transaction type: one loop.
const txLoop = "loop"

// run is an opened CPU test.
type run struct {
	t     dbtarget.Target
	opt   cpu
	arith string // what ran: the asked-for arithmetic, or float where the database has no other
	q     workload.SQLFile
	loop  string
	notes []string
	// functions is where the math functions came from; "" where not checked.
	functions string

	// Prepare's reference figures.
	want     string  // the result the loop must return
	native   float64 // seconds for the loop in Go on this host
	single   float64 // seconds for one loop with one session alone; 0 if not measured
	singleDB bool    // single is by the database's clock

	mu  sync.Mutex
	vus []*vu
}

func (r *run) TxNames() []string    { return []string{txLoop} }
func (r *run) TallyNames() []string { return nil }
func (r *run) Batch() (vus, each int) {
	return r.opt.sessions, r.opt.repeat
}

func (r *run) Config() map[string]any {
	return map[string]any{
		"sessions": r.opt.sessions, "loops": r.opt.loops, "repeat": r.opt.repeat,
		"arith": r.opt.arith, "arith_run": r.arith, "expected_result": r.want,
	}
}

// Mark: the loop keeps no counters in the database.
func (r *run) Mark(context.Context) (workload.Mark, error) { return workload.Mark{}, nil }

func (r *run) Progress([]int64) string { return "" }

func (r *run) Close() error { return nil }

// Prepare measures the references, outside the measured window: the loop
// in native Go on this host, which also fixes the result the database must
// return, and with several sessions one loop run by a session alone.
func (r *run) Prepare(ctx context.Context) error {
	n, secs := nativeLoop(r.opt.loops)
	r.want, r.native = fmt.Sprintf("%.2f", n), secs
	if r.opt.loops == Loops && r.want != Result {
		return fmt.Errorf("the native Go loop computed %s, not %s: this host's floating point is broken", r.want, Result)
	}
	if r.opt.sessions < 2 {
		return nil
	}
	v, err := r.newVU(ctx)
	if err != nil {
		return err
	}
	defer v.Close()
	lr, err := v.once(ctx)
	if err != nil {
		return err
	}
	r.single, r.singleDB = lr.seconds(), lr.db >= 0
	return nil
}

// nativeLoop is the loop in Go's float64, timed.
func nativeLoop(loops int) (float64, float64) {
	began := time.Now()
	n := 0.0
	for f := 1; f <= loops; f++ {
		n = n - 999999*math.Floor(n/999999) + math.Sqrt(float64(f))
	}
	return n, time.Since(began).Seconds()
}

func (r *run) NewVU(ctx context.Context, _ int) (driver.VU, error) {
	v, err := r.newVU(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.vus = append(r.vus, v)
	r.mu.Unlock()
	return v, nil
}

func (r *run) newVU(ctx context.Context) (*vu, error) {
	v := &vu{r: r, Conn: workload.Conn{T: r.t}}
	for _, name := range r.q.Named("setup:" + r.arith) {
		v.Setup = append(v.Setup, r.q.Get(name))
	}
	if err := v.Reconnect(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// clockStepped begins the summary's line that says the database's clock
// was set during a loop, and its timings were not used.
const clockStepped = "Database clock not used"

// loopResult is one loop's timings: by the database's clock (-1 where it
// has none of its own) and by the client's, and when it ended.
type loopResult struct {
	db, client float64
	ended      time.Time
}

// seconds is the loop's time by the database's clock where it has one.
func (l loopResult) seconds() float64 {
	if l.db >= 0 {
		return l.db
	}
	return l.client
}

// vu is one session running loops.
type vu struct {
	workload.Conn
	r     *run
	loops []loopResult // written by the VU alone; read once the run is over
}

func (v *vu) Next() int { return 0 }

func (v *vu) Run(ctx context.Context, _ int, _ driver.Tally) error {
	lr, err := v.once(ctx)
	if err != nil {
		return err
	}
	v.loops = append(v.loops, lr)
	return nil
}

// once runs one loop and checks its result.
func (v *vu) once(ctx context.Context) (loopResult, error) {
	lr := loopResult{db: -1}
	var got string
	began := time.Now()
	err := v.S.QueryRow(ctx, v.r.loop, v.r.opt.loops).Scan(&got, &lr.db)
	lr.ended = time.Now()
	lr.client = lr.ended.Sub(began).Seconds()
	if err != nil {
		return lr, err
	}
	if got != v.r.want {
		return lr, fmt.Errorf("the loop returned %s, not %s: %w", got, v.r.want, driver.ErrAbort)
	}
	return lr, nil
}

// Summarize: seconds per loop (median, with min and max in the lines) on
// both clocks, loops per minute over the window, and the references.
func (r *run) Summarize(res *driver.Result, _, _ workload.Mark) workload.Summary {
	// Only the loops that ended inside the window count: after a Ctrl-C
	// the sessions finish the loop in hand, as the driver lets them.
	var all []loopResult
	for _, v := range r.vus {
		for _, l := range v.loops {
			if !l.ended.After(res.WindowEnd) {
				all = append(all, l)
			}
		}
	}
	s := workload.Summary{Values: map[string]workload.Value{}, Lines: slices.Clone(r.notes), Extra: map[string]any{}}
	if r.functions != "" {
		s.Extra["math_functions"] = r.functions
	}
	if len(all) == 0 {
		s.Lines = append(s.Lines, "No loop finished.")
		return s
	}
	client := make([]float64, len(all))
	var db []float64
	ahead, by := 0, 0.0
	for i, l := range all {
		client[i] = l.client
		if l.db >= 0 {
			db = append(db, l.db)
		}
		// The database times a loop by its wall clock, inside the client's
		// round trip: a loop it timed longer than that saw the wall clock
		// stepped (a CI run's MariaDB loop took 30.045 s by the database's
		// clock and 28.827 s by the client's, the VM's clock set forward).
		if l.db > l.client {
			ahead, by = ahead+1, max(by, l.db-l.client)
		}
	}
	stand, clock := median(client), "client"
	secs := workload.Value{Client: workload.Known(stand)}
	if len(db) == len(all) && ahead == 0 {
		m := median(db)
		secs.DB, stand, clock = &m, m, "database"
	}
	if ahead > 0 {
		s.Lines = append(s.Lines, fmt.Sprintf("%s: the database's clock ran ahead of the client's round trip in %d of %d loops, by up to %.3f s: the host's wall clock was set during them, so the seconds per loop are the client's",
			clockStepped, ahead, len(all), by))
	}
	s.Values[metricSeconds] = secs
	rate := 0.0
	if w := res.WindowSeconds(); w > 0 {
		rate = float64(len(all)) * 60 / w
	}
	s.Values[metricRate] = workload.Value{Client: &rate}

	s.Lines = append(s.Lines, fmt.Sprintf("Result %s in all %d loops (%d iterations, %s arithmetic)", r.want, len(all), r.opt.loops, r.arith))
	if secs.DB != nil {
		s.Lines = append(s.Lines, spread("database clock", db))
	}
	s.Lines = append(s.Lines, spread("client clock", client))
	s.Lines = append(s.Lines, fmt.Sprintf("Loops per minute: %.1f, %d sessions over %.1f s", rate, r.opt.sessions, res.WindowSeconds()))
	if r.single > 0 {
		eff := r.single / stand * 100
		s.Extra["single_session_seconds"], s.Extra["scaling_efficiency_pct"] = r.single, eff
		s.Lines = append(s.Lines, fmt.Sprintf("Scaling: %.2f s per loop with %d sessions against %.2f s for one session alone: %.0f%% efficiency",
			stand, r.opt.sessions, r.single, eff))
	}
	if r.native > 0 {
		s.Extra["native_seconds"], s.Extra["engine_overhead"] = r.native, stand/r.native
		s.Lines = append(s.Lines, fmt.Sprintf("Native Go on the client host: %.3f s per loop (float64); the database took %.1f times as long (%s clock, median)",
			r.native, stand/r.native, clock))
	}
	return s
}

// spread is "seconds per loop (clock): min … median … max".
func spread(clock string, xs []float64) string {
	ys := slices.Sorted(slices.Values(xs))
	return fmt.Sprintf("Seconds per loop (%s): min %.3f  median %.3f  max %.3f", clock, ys[0], median(ys), ys[len(ys)-1])
}

func median(xs []float64) float64 {
	ys := slices.Sorted(slices.Values(xs))
	n := len(ys)
	if n%2 == 1 {
		return ys[n/2]
	}
	return (ys[n/2-1] + ys[n/2]) / 2
}
