// Package runner runs one measured run of an opened workload on an opened
// target and turns it into a result document. The run command and the
// sweeps both go through it, so a sweep point is measured exactly as a
// single run is.
package runner

import (
	"context"
	"errors"
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
	// FailoverAt and SwitchoverAt change the primary of the cluster the
	// run's target is on, that long after the run starts (0: never);
	// whoever knows the cluster makes them Actions (ClusterActions).
	FailoverAt, SwitchoverAt time.Duration
	// Isolation is the level every session runs at ("": the database's).
	Isolation string
	// NodeAffinity is which node of a target of several each VU's session
	// goes to: RoundRobin, or the name of the workload's Affinity.
	NodeAffinity string
	// MaxRetries and Backoff are how the driver retries a transaction the
	// target asks it to: up to MaxRetries times (0: never), each after a
	// backoff.
	MaxRetries int
	Backoff    driver.Backoff
	// LostAfter and StallAfter are the driver's: how long a server may be
	// out of reach before the run gives it up, and how long nothing may
	// end while virtual users wait before that is a stall.
	LostAfter, StallAfter time.Duration
	// Split runs one part of a run split across processes (--part).
	Split Split
	// Quit, closed on a second interrupt, has the run stop waiting on
	// anything and return what it has (driver.Config.Quit).
	Quit <-chan struct{}
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
	return min(runtime.NumCPU(), (o.Split.Part.Share(workers)+7)/8)
}

// Run drives r, an opened w, on t and returns the document. Cancelling ctx
// ends the measured window early; the document is then marked interrupted.
func Run(ctx context.Context, t dbtarget.Target, w workload.Workload, r workload.Run, o Options) (*result.Document, error) {
	info := w.Info()
	o = o.withDefaults()
	if err := o.Validate(info.FixedWork); err != nil {
		return nil, err
	}
	if err := CheckSplit(w, o); err != nil {
		return nil, err
	}
	if err := CheckMemory(r, o); err != nil {
		return nil, err
	}
	cfg := driver.Config{VUs: o.VUs, Connections: o.Connections, Rampup: o.Rampup, Duration: o.Duration, Classify: t.Classify, Observer: o.Live, Actions: o.Actions,
		LostAfter: o.LostAfter, StallAfter: o.StallAfter, Progress: o.progress(r), Part: o.Split.Part, Quit: o.Quit, Probe: probe(t),
		MaxRetries: o.MaxRetries, Backoff: o.Backoff}
	if o.MaxRetries == 0 {
		cfg.MaxRetries = driver.NoRetries
	}
	if s, ok := t.(dbtarget.Severer); ok {
		cfg.Sever = s.Sever
	}
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
	place, err := spread(t, r, o)
	if err != nil {
		return nil, err
	}
	cfg.Place = place
	defer holdProcs(o.clientProcs())()
	version, err := t.Version(ctx)
	if err != nil {
		return nil, err
	}
	if err := prepare(ctx, r, o.Progress); err != nil {
		return nil, err
	}
	var m *member
	if !o.Split.Part.Whole() {
		o.Progress(fmt.Sprintf("part %s: waiting for the other parts of run %q", o.Split.Part, o.Split.Name))
		if m, err = join(ctx, t, w, r, o, version); err != nil {
			return nil, err
		}
		defer m.Close()
		cfg.Meet = m.meet
	}
	e := startEdges(ctx, t, r, o, m == nil || m.Leader())
	cfg.WindowEdge = e.read
	res, err := driver.Run(ctx, r, cfg)
	recording := e.rec.Stop()
	if err != nil {
		if m != nil {
			m.failed(ctx, err)
		}
		return nil, err
	}
	unread := e.unread(res)
	if unread != "" {
		o.Warn("database-side counters unavailable: " + unread)
		e.marks = [2]workload.Mark{{Unread: true}, {Unread: true}}
	}
	e.onDriverClock(res, recording)
	if at, lost := res.LostAt(); lost {
		e.marks[1] = workload.Mark{Lost: true}
		// The telemetry's window ends where the throughput's does.
		if recording != nil && !res.WindowStart.IsZero() {
			recording.Window[1] = min(recording.Window[1], at.Sub(res.Started).Seconds())
		}
	}
	var part *result.Part
	if m != nil {
		part = m.section(ctx, o, res, e.flushed[1]-e.flushed[0], o.Warn)
	}
	doc, err := document(t, w, r, o, version, res, e.marks, recording, part)
	if err == nil && unread != "" {
		doc.Notes = append(doc.Notes, "The database's counters were not read at the window's edges: "+unread)
	}
	return doc, err
}

// startEdges starts the telemetry and makes what reads the window's edges.
// Only the marking process reads the database's side, of both: the one
// process of a run, or the first part of a run in parts; another part
// records its own host, and counts its flushes.
func startEdges(ctx context.Context, t dbtarget.Target, r workload.Run, o Options, marker bool) *edges {
	started := time.Now()
	var src telemetry.Source
	if !o.Telemetry.Off && marker {
		src = telemetrySource(ctx, t, o.Warn)
	}
	e := &edges{r: r, started: started, rec: telemetry.Start(ctx, o.Telemetry, src, started), marker: marker}
	e.flushes, _ = t.(dbtarget.FlushCounter)
	return e
}

// probe asks t's server its version, on the target's own connection,
// which counts nothing in the measured database: an answer during a stall
// says the server is there.
func probe(t dbtarget.Target) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := t.Version(ctx)
		return err
	}
}

// CheckMemory refuses virtual users this machine's memory cannot hold,
// before the driver allocates any: this process's share of them, each
// with its histograms and session, or, pooled, of the terminals and of
// the sessions that hold the histograms. The run command asks it before
// it says the run starts; Run asks it again, for sweeps.
func CheckMemory(r workload.Run, o Options) error {
	vus, connections := o.VUs, o.Connections
	label := func(flag string, n int) string { return fmt.Sprintf("--%s %d", flag, n) }
	if b, ok := r.(workload.Batch); ok {
		vus, _ = b.Batch()
		connections = 0
		label = func(_ string, n int) string { return fmt.Sprintf("the workload's %d virtual users", n) }
	}
	share, types := o.Split.Part.Share, len(r.TxNames())
	if connections == 0 {
		return workload.CheckMemory(label("vus", vus), share(vus), driver.HolderBytes(types), "virtual users, with their histograms and sessions,")
	}
	if err := workload.CheckMemory(label("vus", vus), share(vus), driver.TerminalBytes, "terminals"); err != nil {
		return err
	}
	return workload.CheckMemory(label("connections", connections), share(connections), driver.HolderBytes(types), "sessions, with their histograms,")
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
	// Options made in code rather than from flags or a spec, which
	// refuse zero, leave the driver's own parameters at their defaults.
	if o.LostAfter == 0 {
		o.LostAfter = dbtarget.ReconnectLimit
	}
	if o.StallAfter == 0 {
		o.StallAfter = driver.DefaultStallAfter
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if o.NodeAffinity == "" {
		o.NodeAffinity = RoundRobin
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
			line += fmt.Sprintf("  sessions %d/%d queue %d", tk.Sessions, o.Split.Part.Share(o.Connections), tk.Queued)
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
	r       workload.Run
	rec     *telemetry.Recorder
	started time.Time
	marks   [2]workload.Mark
	// err is the first mark's error.
	err error
	// marker says this process reads the database's marks.
	marker bool
	// flushes, where the target counts its flushes, gives flushed: how
	// many it had run at each edge. A part other than the marking one
	// runs its end edge's flushes inside the marker's window, and says how
	// many, so that the merge takes them out of the database's count.
	flushes dbtarget.FlushCounter
	flushed [2]int64
	// done says which edges were read.
	done [2]bool
}

// unread says why the marking process has no database-side figures for
// the window res measured, though the server was not lost (which the
// summary says itself): the read failed, or a second interrupt stopped
// the run before its end was read. "" when it has them, or has none to
// have.
func (e *edges) unread(res *driver.Result) string {
	switch {
	case !e.marker || res.ServerLost || res.WindowStart.IsZero():
		return ""
	case !e.done[1] || errors.Is(e.err, context.Canceled):
		return "the run was stopped before its end was read"
	case e.err != nil:
		return human.OneLine(e.err)
	}
	return ""
}

// onDriverClock puts the marks and the recording on the driver's clock,
// which starts once the virtual users are open (in a run in parts, at the
// instant the parts agreed): one time axis for the series, the events,
// the marks and the telemetry, however long the VUs took to open. The
// driver holds the virtual users still while the marks are read, so the
// counters are the window edge's at any instant of the read: each mark is
// stamped at its edge of the client's window, so that the two sides
// divide by the same time. (A run in parts reads them halfway through a
// hold outside the window.)
func (e *edges) onDriverClock(res *driver.Result, rec *telemetry.Recording) {
	edges := [2]time.Time{res.WindowStart, res.WindowEnd}
	for i := range e.marks {
		if e.marks[i].Values != nil && !edges[i].IsZero() {
			e.marks[i].At = edges[i].Sub(res.Started).Seconds()
		}
	}
	d := res.Started.Sub(e.started).Seconds()
	if rec != nil {
		rec.Shift(d)
	}
}

// read reads the window's edge, start or end, within ctx: the driver's,
// which ends LostAfter after the server was last heard from.
func (e *edges) read(ctx context.Context, start bool) error {
	i := 1
	if start {
		i = 0
	}
	e.done[i] = true
	if e.flushes != nil {
		e.flushed[i] = e.flushes.Flushes()
	}
	if !e.marker {
		e.rec.Edge(ctx, start)
		return nil
	}
	// The database's marks are read nearest the window's edges, the
	// telemetry's just outside them.
	if start {
		e.rec.Edge(ctx, start)
	}
	// The marks are read even after Ctrl-C, which is what ends the
	// window (the driver's ctx outlives it); onDriverClock stamps them.
	m, err := e.r.Mark(ctx)
	if !start {
		e.rec.Edge(ctx, start)
	}
	e.marks[i] = m
	if err != nil && e.err == nil {
		e.err = err
	}
	return err
}

// document is the run's result document: its configuration, the driver's
// result, the workload's summary from the marks, and the telemetry. A part
// of a run in parts has only its share of the client's figures, which are
// not the database's: it summarizes them alone, and keeps the marks it
// read for the merge.
func document(t dbtarget.Target, w workload.Workload, r workload.Run, o Options, version string, res *driver.Result, marks [2]workload.Mark, recording *telemetry.Recording, part *result.Part) (*result.Document, error) {
	cfg := runConfig(w.Info(), r, o)
	cfg["client_cpus"] = runtime.GOMAXPROCS(0)
	summarized := marks
	if part != nil {
		summarized = [2]workload.Mark{}
	}
	run := result.Run{
		Workload: w.Name(), Info: w.Info(), Target: result.Target{Kind: t.Kind(), Version: version, URL: t.URL()},
		Config: cfg, Result: res, Summary: r.Summarize(res, summarized[0], summarized[1]),
		TxNames: r.TxNames(), TallyNames: r.TallyNames(), Telemetry: recording, Part: part,
	}
	if marks[1].Values != nil {
		run.Marks = marks[:]
	}
	doc, err := result.FromRun(run)
	if err == nil {
		if doc.Placement = placed(t, o); doc.Placement != nil {
			doc.Lines = append(doc.Lines, fmt.Sprintf("The database's side is the %d nodes' own counters summed: each node counts the transactions of its own clients, not the write sets it applies for the others", len(doc.Placement.Nodes)))
		}
	}
	return doc, err
}

// runConfig is the run's configuration as its document records it: the
// workload's resolved parameters and the driver's, of the whole run.
func runConfig(info workload.Info, r workload.Run, o Options) map[string]any {
	cfg := r.Config()
	if !info.FixedWork {
		cfg["vus"], cfg["rampup"], cfg["duration"] = o.VUs, o.Rampup.String(), o.Duration.String()
	}
	if o.Connections > 0 {
		cfg["connections"] = o.Connections
	}
	cfg["max_retries"], cfg["retry_backoff"], cfg["retry_backoff_max"] = o.MaxRetries, o.Backoff.Base.String(), o.Backoff.Max.String()
	if o.Isolation != "" {
		cfg["isolation"] = o.Isolation
	}
	return cfg
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
