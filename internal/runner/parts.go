package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/parts"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/workload"
)

// Split is a run split into parts across processes (--part): this process
// runs one part of it, meets the others at a barrier kept in the target
// database, and measures the window they agree on there.
type Split struct {
	// Part is this process's part; the zero value runs the whole run.
	Part driver.Part
	// Name names the barrier (--part-run), so that two split runs on one
	// database do not meet.
	Name string
	// Timeout is how long the parts wait for each other (--part-timeout).
	Timeout time.Duration
}

// CheckSplit refuses, in one line, a run in parts that cannot be one: a
// workload whose parts dbrig cannot merge, or options that act on the
// whole run from one process.
func CheckSplit(w workload.Workload, o Options) error {
	s := o.Split
	if s.Part.Whole() {
		return nil
	}
	n := s.Part.Of
	_, merges := w.(workload.Resummarizer)
	switch {
	case w.Info().FixedWork || !merges:
		return exitcode.Userf("--part: %s cannot run in parts yet (dbrig merge cannot make its summary again): run it in one process", w.Name())
	case o.Beside > 0:
		return exitcode.Userf("--part does not run beside --with: run one workload in parts")
	case len(o.Actions) > 0:
		return exitcode.Userf("--part: a run in parts cannot act on the server mid-run; run it in one process")
	case o.VUs < n:
		return exitcode.Userf("--vus %d is fewer than the %d parts: every part needs at least one virtual user", o.VUs, n)
	case o.Connections > 0 && o.Connections < n:
		return exitcode.Userf("--connections %d is fewer than the %d parts: every part needs at least one session", o.Connections, n)
	case s.Timeout <= 0:
		return exitcode.Userf("--part-timeout must be positive, got %s", s.Timeout)
	}
	return nil
}

// member is this process's place in a split run: the barrier's member
// until the run starts, and what the part's document records after it.
type member struct {
	*parts.Member
	split Split
	// sched is the schedule the parts met on, on the local clock.
	sched driver.Schedule
	// met says the parts met, and the run started: a failure after it is
	// this part's alone.
	met bool
	// beyond is what the parts agreed on beyond the configuration.
	beyond map[string]any
}

// join meets the other parts of the run at the barrier in t's database:
// the first there fixes the seed, and the others take it, so that the
// parts' inputs are the single run's, and compare what they would record.
func join(ctx context.Context, t dbtarget.Target, w workload.Workload, r workload.Run, o Options, version string) (*member, error) {
	seeded, _ := r.(workload.Seeded)
	var seed uint64
	if seeded != nil {
		seed = seeded.Seed()
	}
	host, _ := os.Hostname()
	m, err := parts.Join(ctx, t, parts.Options{
		Part: o.Split.Part, Name: o.Split.Name, Timeout: o.Split.Timeout, Rampup: o.Rampup, Duration: o.Duration,
		Seed: seed, Host: host,
		Config: func(s uint64) (map[string]any, error) {
			if seeded != nil {
				seeded.Reseed(s)
			}
			return agreed(t, w, r, o, version), nil
		},
	})
	if err != nil {
		return nil, o.Split.errorf(ctx, err)
	}
	return &member{Member: m, split: o.Split, beyond: beyond(t, w, o, version)}, nil
}

// agreed is what every part of a run must have the same: the document's
// configuration but for what is each host's own, and beyond it.
func agreed(t dbtarget.Target, w workload.Workload, r workload.Run, o Options, version string) map[string]any {
	cfg := runConfig(w.Info(), r, o)
	maps.Copy(cfg, beyond(t, w, o, version))
	return cfg
}

// beyond is what the parts agree on that their documents' configuration
// lacks: the options that shape the window, the workload, the server and
// dbrig's own build. A part's document keeps it (result.Part.Agreed), so
// that merge can hash what the parts agreed on again.
func beyond(t dbtarget.Target, w workload.Workload, o Options, version string) map[string]any {
	return map[string]any{
		"workload": w.Name(), "target_kind": t.Kind(), "target_version": version, "dbrig": build(),
		"parts": o.Split.Part.Of, "lost_after": o.LostAfter.String(), "stall_after": o.StallAfter.String(),
		"sample": o.Telemetry.Interval.String(), "no_telemetry": o.Telemetry.Off,
	}
}

// build names the dbrig binary: its module version and commit.
func build() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			v += " " + s.Key + "=" + s.Value
		}
	}
	return v
}

// meet is the driver's Meet: this part's virtual users are open, so it
// says it is ready and waits for the others, then closes its barrier
// session before the run starts.
func (m *member) meet(ctx context.Context) (driver.Schedule, error) {
	s, err := m.Ready(ctx)
	m.Close()
	if err != nil {
		return s, m.split.errorf(ctx, err)
	}
	m.sched, m.met = s, true
	return s, nil
}

// failed tells the other parts that this one failed before the run
// started, so that they stop waiting and nothing half-runs; a part that
// fails once the run is under way leaves the others to finish.
func (m *member) failed(ctx context.Context, err error) {
	if !m.met {
		m.Fail(context.WithoutCancel(ctx), fmt.Sprintf("part %s failed before the run started: %s", m.split.Part, human.OneLine(err)))
	}
}

// section is the part's own section of its document: who it was in the
// run, and its schedule and window edges on the database server's clock.
func (m *member) section(ctx context.Context, o Options, res *driver.Result, flushes int64, warn func(string)) *result.Part {
	c := m.Clock()
	server := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.Add(c.Offset).UTC()
	}
	p := &result.Part{
		Index: m.split.Part.Index, Of: m.split.Part.Of, RunID: m.RunID(), RunName: m.split.Name, Marker: m.Leader(),
		ConfigSHA256: m.ConfigSHA256(), Agreed: m.beyond, VUs: m.split.Part.Share(o.VUs), Connections: m.split.Part.Share(o.Connections),
		Schedule:    result.PartSchedule{Start: server(m.sched.Start), Open: server(m.sched.Open), Close: server(m.sched.Close), HoldMs: ms(m.sched.Hold)},
		Clock:       result.PartClock{OffsetMs: ms(c.Offset), UncertaintyMs: ms(c.Uncertainty)},
		WindowStart: server(res.WindowStart), WindowEnd: server(res.WindowEnd), EndFlushes: flushes,
	}
	if after, err := m.Remeasure(context.WithoutCancel(ctx)); err == nil {
		p.Clock.OffsetAfterMs = ms(after.Offset)
	} else {
		warn(fmt.Sprintf("the clock's offset after the run is unknown: %v", human.OneLine(err)))
	}
	return p
}

// errorf says which part err happened to, as each part prints its own;
// Ctrl-C (ctx's end) before the run started is one line, nothing measured.
func (s Split) errorf(ctx context.Context, err error) error {
	var ue *exitcode.UserError
	if ctx.Err() != nil {
		return exitcode.Userf("part %s: stopped before the run started: nothing was measured", s.Part)
	}
	if errors.As(err, &ue) {
		return exitcode.Userf("part %s: %s", s.Part, ue.Msg)
	}
	return fmt.Errorf("part %s: %w", s.Part, err)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
