package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/dbrig/dbrig/internal/workload"
)

// Options are what the caller provides for running a sweep.
type Options struct {
	// Log receives status lines: the run starting, the warm-up, the server.
	Log io.Writer
	// Progress receives the runner's live line; ProgressDone ends it.
	Progress     func(line string)
	ProgressDone func()
	// Stop, once closed, ends the sweep after the current run. Cancelling
	// the context passed to Run interrupts the current run itself.
	Stop <-chan struct{}
	// Quit, once closed, has the current run stop waiting and return what
	// it has (runner.Options.Quit).
	Quit <-chan struct{}
	// DropCaches empties the OS page cache; nil means DropPageCache.
	DropCaches func() error
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
	// Live, when set, follows each run as it happens; labels tell the
	// runs apart: the point, its parameters and the repetition.
	Live func(info workload.Info, r workload.Run, labels map[string]string) runner.Live
	// MaxErrorPct bounds each run's errors, in % of its window's
	// transactions (result.HoldErrors): a run past it is kept but not
	// counted, and stops the sweep. nil means result.DefaultMaxErrorPct.
	MaxErrorPct *float64
}

// runner holds what one Run call shares between its steps.
type run struct {
	*Sweep
	o        Options
	srv      server.Server // the running server's, or the first build's
	builds   []ServerBuild
	running  *serverStart // the running server's
	pin      *server.ClientPin
	facts    telemetry.Server // what the runs' telemetry records of the server
	url      string
	t        dbtarget.Target
	built    map[string]bool // by cluster directory; "" for a URL
	dropNote bool
	// settleNote: the note that the target could not settle is made once.
	settleNote bool
	// poolChecked: the workload was asked, once, whether its virtual
	// users can share sessions (checkPooled).
	poolChecked bool
}

// Run carries the sweep on from Doc.Done until every run is done, Stop is
// closed, or ctx is cancelled. It rewrites the sweep document after every
// run. A stop or interruption returns nil with Doc.Interrupted set; a
// setting the server rejects returns a exitcode.UserError.
func (s *Sweep) Run(ctx context.Context, o Options) (err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	if o.ProgressDone == nil {
		o.ProgressDone = func() {}
	}
	if o.DropCaches == nil {
		o.DropCaches = DropPageCache
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxErrorPct == nil {
		o.MaxErrorPct = new(result.DefaultMaxErrorPct)
	}
	r := &run{Sweep: s, o: o, url: s.Spec.Target.URL, built: map[string]bool{}}
	doc := s.Doc
	if doc.StartedAt.IsZero() {
		doc.StartedAt = o.Now().UTC()
	}
	doc.Host = result.ReadHost()
	doc.Interrupted, doc.Complete = false, false
	if err := os.MkdirAll(filepath.Join(s.Dir, "runs"), 0o755); err != nil {
		return err
	}
	if err := s.save(); err != nil {
		return err
	}
	defer func() {
		if r.t != nil {
			r.t.Close()
		}
		if serr := r.stopServer(); serr != nil && err == nil {
			err = serr
		}
		if werr := s.save(); werr != nil && err == nil {
			err = werr
		}
	}()
	if s.Spec.Target.Managed {
		if err := r.initServer(ctx); err != nil {
			return err
		}
	}
	for doc.Done < len(doc.Order) {
		if r.stopping(ctx) {
			doc.Interrupted = true
			return nil
		}
		stop, err := r.next(ctx)
		if err != nil || stop {
			if err == nil || r.stopping(ctx) && !isUser(err) {
				doc.Interrupted = true
				return nil
			}
			return err
		}
	}
	doc.Complete = true
	return nil
}

func isUser(err error) bool {
	var ue *exitcode.UserError
	return errors.As(err, &ue)
}

func (r *run) stopping(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	select {
	case <-r.o.Stop:
		return true
	default:
		return false
	}
}

// stoppable is ctx, also cancelled by Stop: a build or a warm-up is not a
// run, so the first Ctrl-C does not wait for it.
func (r *run) stoppable(ctx context.Context) (context.Context, func()) {
	c, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-r.o.Stop:
			cancel()
		case <-c.Done():
		}
	}()
	return c, cancel
}

// pointError records err against the point and makes it the sweep's
// one-line error, naming the point.
func (r *run) pointError(pi int, err error) error {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	r.Doc.Points[pi].Errors = append(r.Doc.Points[pi].Errors, msg)
	var p *exitcode.Panic
	if errors.As(err, &p) {
		return err // a bug in dbrig, which the command reports as one
	}
	return exitcode.Userf("point %d (%s): %s; the sweep stopped there, results so far are in %s",
		pi+1, r.Points[pi].Label(), msg, r.Dir)
}

// next does the run at Doc.Done. stop reports that the run was interrupted
// and the sweep must end there.
func (r *run) next(ctx context.Context) (stop bool, err error) {
	doc := r.Doc
	pi, rep := doc.Order[doc.Done][0], doc.Order[doc.Done][1]
	pt := r.Points[pi]
	if r.srv != nil {
		if err := r.startServer(ctx, pi); err != nil {
			return false, err
		}
	}
	if err := r.openTarget(ctx); err != nil {
		return false, err
	}
	if stop, err := r.ensureBuilt(ctx, pt); stop || err != nil {
		return stop, err
	}
	if err := r.checkPooled(ctx); err != nil {
		return false, err
	}
	params := r.Spec.RunParams(pt)
	left := r.Spec.Estimate(r.Points, doc.Order, doc.Done, 0)
	fmt.Fprintf(r.o.Log, "run %d/%d: point %d (%s), repetition %d — about %s left\n",
		doc.Done+1, len(doc.Order), pi+1, r.Spec.Label(pt), rep, human.FormatDuration(left))
	if r.settle(ctx) {
		return true, nil
	}
	r.dropCaches()
	if lookup(params, "prewarm") == PrewarmFull {
		if stop, err := r.prewarm(ctx, pi); stop || err != nil {
			return stop, err
		}
	}
	docPath, err := r.measure(ctx, pi, rep, params)
	if err != nil {
		if ctx.Err() != nil && docPath == "" {
			return true, nil
		}
		return false, r.runError(ctx, pi, err)
	}
	return docPath == "", nil
}

// checkPooled refuses, before the sweep's first run, a point with a pool
// of sessions (connections) whose workload's virtual users cannot share
// them: the spec's check cannot know it, since only an opened run says,
// and the runner would refuse it only when the sweep reaches the point.
// The first such point's opened run answers for the workload; a run that
// will not open here is left to fail as the point runs.
func (r *run) checkPooled(ctx context.Context) error {
	if r.poolChecked {
		return nil
	}
	r.poolChecked = true
	for pi, pt := range r.Points {
		w, o, err := r.Spec.configure(r.Spec.RunParams(pt))
		if err != nil || o.Connections == 0 {
			continue
		}
		opened, err := w.Open(ctx, r.t)
		if err != nil {
			return nil
		}
		err = runner.CheckPooled(opened, o.Connections)
		opened.Close()
		if err != nil {
			return r.pointError(pi, err)
		}
		return nil
	}
	return nil
}

// openTarget opens the target the runs measure, unless it is open, and
// puts what it is in the sweep document.
func (r *run) openTarget(ctx context.Context) (err error) {
	if r.t != nil {
		return nil
	}
	if r.t, err = dbtarget.Open(ctx, r.url); err != nil {
		return err
	}
	if r.Doc.Target.Kind == "" || r.srv != nil {
		v, _ := r.t.Version(ctx)
		kind := r.t.Kind()
		url := r.t.URL()
		if len(r.builds) > 1 {
			// Every build's, as New and initServer put them; each
			// run's document has its own build's URL.
			v, kind, url = r.Doc.Target.Version, r.Doc.Target.Kind, ""
		}
		r.Doc.Target = result.Target{Kind: kind, Version: v, URL: url}
	}
	return nil
}

// runError is what a failed run ends the sweep with: a refusal of the
// point, the server's crash, or the run's own error, each recorded
// against the point.
func (r *run) runError(ctx context.Context, pi int, err error) error {
	if isUser(err) {
		return r.pointError(pi, err)
	}
	if r.srv != nil {
		// A run that fails because the server died says so.
		if st, serr := r.srv.Status(context.WithoutCancel(ctx)); serr == nil && st.State == server.Crashed {
			return r.pointError(pi, fmt.Errorf("the server crashed: %s (run error: %v)", st.Reason, err))
		}
	}
	r.Doc.Points[pi].Errors = append(r.Doc.Points[pi].Errors, err.Error())
	return err
}
