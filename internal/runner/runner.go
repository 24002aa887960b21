// Package runner runs one measured run of an opened workload on an opened
// target and turns it into a result document. The run command and the
// sweeps both go through it, so a sweep point is measured exactly as a
// single run is.
package runner

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

// Options are the driver-side parameters of a run.
type Options struct {
	VUs int
	// Connections, when positive, makes the VUs terminals over a pool of
	// this many sessions (driver.Config.Connections).
	Connections int
	// Beside is how many virtual users other workloads run beside this
	// one (--with); with some, this one may have none, and they run alone.
	Beside   int
	Rampup   time.Duration
	Duration time.Duration
	// ClientCPUs caps the Go runtime's Ps; 0 picks one per 8 VUs.
	ClientCPUs int
	// Progress receives a status line about once a second.
	Progress func(line string)
	// Warn receives notes that do not stop the run.
	Warn func(msg string)
	// Telemetry is how the run records telemetry, with the facts its
	// caller knows of the server (a sweep's managed, confined one).
	Telemetry telemetry.Config
	// Live, when set, follows the run as it happens.
	Live Live
	// Actions are done to the system under test at set moments of the
	// run (a server killed and restarted); the document records their
	// events.
	Actions []driver.Action
	// LostAfter and StallAfter are the driver's: how long a server may be
	// out of reach before the run gives it up, and how long nothing may
	// end while virtual users wait before that is a stall.
	LostAfter, StallAfter time.Duration
}

// Live follows a run as it happens (internal/exporter serves it to Prometheus):
// the driver tells it every transaction and phase, the runner every
// second's tick.
type Live interface {
	driver.Observer
	Tick(driver.Tick)
}

// clientProcs is how many Ps the Go runtime gets for a run. Virtual users
// mostly wait on the database, and every P beyond what they need adds idle
// threads that the runtime wakes and parks around each round trip: at 4
// VUs one P used a fifth less client CPU than two, in both modes, at the
// same throughput. In a pooled run the sessions run the transactions,
// and the terminals only think: the sessions count.
func (o Options) clientProcs() int {
	if o.ClientCPUs > 0 {
		return o.ClientCPUs
	}
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	workers := o.VUs
	if o.Connections > 0 {
		workers = o.Connections
	}
	return min(runtime.NumCPU(), (workers+7)/8)
}

// Run drives r, an opened w, on t and returns the document. Cancelling ctx
// ends the measured window early; the document is then marked interrupted.
func Run(ctx context.Context, t dbtarget.Target, w workload.Workload, r workload.Run, o Options) (*result.Document, error) {
	info := w.Info()
	if err := o.Validate(info.FixedWork); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	cfg := driver.Config{VUs: o.VUs, Connections: o.Connections, Rampup: o.Rampup, Duration: o.Duration, Classify: t.Classify, Observer: o.Live, Actions: o.Actions,
		LostAfter: o.LostAfter, StallAfter: o.StallAfter, Progress: o.progress(r)}
	if b, ok := r.(workload.Batch); ok {
		cfg.VUs, cfg.Each = b.Batch()
		cfg.Rampup, cfg.Duration, cfg.Connections = 0, 0, 0
		o.VUs, o.Connections = cfg.VUs, 0
	}
	if err := CheckPooled(r, cfg.Connections); err != nil {
		return nil, err
	}
	if err := workload.CheckVUs(r, cfg.VUs); err != nil {
		return nil, err
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(o.clientProcs()))
	version, err := t.Version(ctx)
	if err != nil {
		return nil, err
	}
	if err := prepare(ctx, r, o.Progress); err != nil {
		return nil, err
	}
	started := time.Now()
	var src telemetry.Source
	if !o.Telemetry.Off {
		src = telemetrySource(ctx, t, o.Warn)
	}
	e := &edges{ctx: ctx, r: r, started: started, rec: telemetry.Start(ctx, o.Telemetry, src, started)}
	cfg.WindowEdge = e.read
	res, err := driver.Run(ctx, r, cfg)
	recording := e.rec.Stop()
	if err != nil {
		return nil, err
	}
	if e.err != nil {
		o.Warn(fmt.Sprintf("database-side counters unavailable: %v", human.OneLine(e.err)))
		e.marks = [2]workload.Mark{}
	}
	e.onDriverClock(res.Started, recording)
	if at, lost := res.LostAt(); lost {
		e.marks[1] = workload.Mark{Lost: true}
		// The telemetry's window ends where the throughput's does.
		if recording != nil && !res.WindowStart.IsZero() {
			recording.Window[1] = min(recording.Window[1], at.Sub(res.Started).Seconds())
		}
	}
	return document(t, w, r, o, version, res, e.marks, recording)
}

// CheckPooled refuses a pool of sessions (--connections) to an opened run
// whose virtual users cannot share them. The run command asks it before
// it says the run starts; Run asks it again, for sweeps.
func CheckPooled(r workload.Run, connections int) error {
	if _, ok := r.(driver.Pooled); connections > 0 && !ok {
		return exitcode.Userf("--connections: this workload's virtual users cannot share sessions")
	}
	return nil
}

// withDefaults gives o a Progress and a Warn that drop what they are
// told, where it has none.
func (o Options) withDefaults() Options {
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	return o
}

// progress turns the driver's ticks into status lines, and hands them to
// the live view.
func (o Options) progress(r workload.Run) func(driver.Tick) {
	return func(tk driver.Tick) {
		if o.Live != nil {
			o.Live.Tick(tk)
		}
		where := fmt.Sprintf("%4.0fs left", tk.Left.Seconds())
		if tk.Total > 0 {
			where = fmt.Sprintf("%d of %d done", tk.Done, tk.Total)
		}
		if head := r.Progress(tk.Counts); head != "" {
			where += "  " + head
		}
		line := fmt.Sprintf("%-8s %s  VUs %d  errors %d", tk.Phase, where, tk.VUs, tk.Errors)
		if o.Connections > 0 {
			line += fmt.Sprintf("  sessions %d/%d queue %d", tk.Sessions, o.Connections, tk.Queued)
		}
		o.Progress(line)
	}
}

// prepare does the work r has to do before the window, if any.
func prepare(ctx context.Context, r workload.Run, progress func(string)) error {
	p, ok := r.(workload.Preparer)
	if !ok {
		return nil
	}
	progress("preparing, outside the measured window")
	if err := p.Prepare(ctx); err != nil {
		if ctx.Err() != nil {
			return exitcode.Userf("stopped while preparing, before the measured window: nothing was measured")
		}
		return err
	}
	return nil
}

// edges reads the database's marks at the window's edges, as the driver's
// WindowEdge, and has the telemetry sample just outside them.
type edges struct {
	ctx     context.Context
	r       workload.Run
	rec     *telemetry.Recorder
	started time.Time
	marks   [2]workload.Mark
	// err is the first mark's error.
	err error
}

// onDriverClock puts the marks and the recording, timed from when the
// run started, on the driver's clock, which starts once the virtual users
// are open: one time axis for the series, the events, the marks and the
// telemetry, however long the VUs took to open.
func (e *edges) onDriverClock(driverStarted time.Time, rec *telemetry.Recording) {
	d := driverStarted.Sub(e.started).Seconds()
	for i := range e.marks {
		if e.marks[i].Values != nil {
			e.marks[i].At -= d
		}
	}
	if rec != nil {
		rec.Shift(d)
	}
}

func (e *edges) read(start bool) {
	ctx := e.ctx
	i := 1
	if start {
		i = 0
	}
	// The database's marks are read nearest the window's edges, the
	// telemetry's just outside them.
	if start {
		e.rec.Edge(ctx, start)
	}
	// The marks are read even after Ctrl-C, which is what ends the
	// window. The driver holds the virtual users still while they are
	// read, so the counters are the window edge's at any instant of
	// the mark: it is stamped where the client's window starts, as the
	// VUs go on, and where it ends, as they stopped, so that the two
	// sides divide by the same time.
	before := time.Since(e.started)
	m, err := e.r.Mark(context.WithoutCancel(ctx))
	m.At = before.Seconds()
	if start {
		m.At = time.Since(e.started).Seconds()
	}
	if !start {
		e.rec.Edge(ctx, start)
	}
	e.marks[i] = m
	if err != nil && e.err == nil {
		e.err = err
	}
}

// document is the run's result document: its configuration, the driver's
// result, the workload's summary from the marks, and the telemetry.
func document(t dbtarget.Target, w workload.Workload, r workload.Run, o Options, version string, res *driver.Result, marks [2]workload.Mark, recording *telemetry.Recording) (*result.Document, error) {
	info := w.Info()
	cfg := r.Config()
	if !info.FixedWork {
		cfg["vus"], cfg["rampup"], cfg["duration"] = o.VUs, o.Rampup.String(), o.Duration.String()
	}
	if o.Connections > 0 {
		cfg["connections"] = o.Connections
	}
	cfg["client_cpus"] = runtime.GOMAXPROCS(0)
	run := result.Run{
		Workload: w.Name(), Info: info, Target: result.Target{Kind: t.Kind(), Version: version, URL: t.URL()},
		Config: cfg, Result: res, Summary: r.Summarize(res, marks[0], marks[1]),
		TxNames: r.TxNames(), TallyNames: r.TallyNames(), Telemetry: recording,
	}
	if marks[1].Values != nil {
		run.Marks = marks[:]
	}
	return result.FromRun(run)
}

// telemetrySource opens t's database side of telemetry, if it has one. A
// source that will not open costs the run only its database telemetry.
func telemetrySource(ctx context.Context, t dbtarget.Target, warn func(string)) telemetry.Source {
	s, ok := t.(telemetry.Sourcer)
	if !ok {
		return nil
	}
	src, err := s.Telemetry(ctx)
	if err != nil {
		warn(fmt.Sprintf("database telemetry unavailable: %v", human.OneLine(err)))
		return nil
	}
	return src
}
