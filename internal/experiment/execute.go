package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

// DatabaseName is the database a managed sweep creates and runs in.
const DatabaseName = "dbrig"

// Sweep is an experiment being run: its spec, the expanded points, and
// the sweep document, which lives in Dir/sweep.json.
type Sweep struct {
	Spec   *Spec
	Points []Point
	Doc    *result.Sweep
	Dir    string
}

// New lays out a fresh sweep of spec in dir; nothing runs yet.
func New(spec *Spec, dir string) *Sweep {
	points := spec.Points()
	info := spec.Info()
	doc := &result.Sweep{
		SchemaVersion: result.SchemaVersion, Kind: result.SweepKind,
		Name: spec.Name, Workload: spec.Workload, Spec: spec.JSON(),
		Metrics: result.Defs(info), PrimaryMetric: info.Primary, PrimaryTx: info.PrimaryTx,
		Varied: spec.Varied(), Repeat: spec.Repeat,
		Order: Order(len(points), spec.Repeat),
	}
	if spec.Target.Managed {
		doc.Target = result.Target{Kind: strings.Join(spec.Target.Kinds(), ", ")}
		if len(spec.Target.Settings) > 0 {
			doc.Settings = map[string]string{}
			for _, p := range spec.Target.Settings {
				doc.Settings[p.Name] = p.Value
			}
		}
	} else {
		doc.Target = result.Target{URL: dbtarget.Redact(spec.Target.URL)}
	}
	if len(spec.Baseline) > 0 {
		doc.Baseline = map[string]string{}
		for _, b := range spec.Baseline {
			doc.Baseline[b.Name] = b.Value
		}
	}
	for i, p := range points {
		doc.Points = append(doc.Points, result.SweepPoint{
			Params: p.Map(), Runs: make([]string, spec.Repeat),
			Values: map[string][]float64{}, P95: []float64{}, BaselinePoint: spec.BaselineOf(points, i),
		})
	}
	return &Sweep{Spec: spec, Points: points, Doc: doc, Dir: dir}
}

// Path is where the sweep document lives.
func (s *Sweep) Path() string { return filepath.Join(s.Dir, "sweep.json") }

// Resume opens the sweep in dir to carry on from its last finished run.
// url replaces the stored target URL, which never holds a password; it
// must name the same target.
func Resume(dir, url string) (*Sweep, error) {
	path := filepath.Join(dir, "sweep.json")
	if _, err := os.Stat(path); err != nil {
		return nil, exitcode.Userf("%s holds no sweep to resume (no sweep.json)", dir)
	}
	doc, err := result.ReadSweep(path)
	if err != nil {
		return nil, exitcode.Userf("%v", err)
	}
	spec, err := Parse(path+" (spec)", doc.Spec)
	if err != nil {
		return nil, err
	}
	switch {
	case url != "" && spec.Target.Managed:
		return nil, exitcode.Userf("--target: the sweep in %s runs on a managed server, not a URL", dir)
	case url != "" && dbtarget.Redact(url) != spec.Target.URL:
		return nil, exitcode.Userf("--target %s is not the sweep's target (%s)", dbtarget.Redact(url), spec.Target.URL)
	case url != "":
		spec.Target.URL = url
	}
	points := spec.Points()
	if len(points) != len(doc.Points) || len(doc.Order) != len(points)*spec.Repeat || doc.Done > len(doc.Order) {
		return nil, exitcode.Userf("%s: the points do not match the sweep's spec; the document was edited", path)
	}
	for i, p := range points {
		if !maps.Equal(p.Map(), doc.Points[i].Params) {
			return nil, exitcode.Userf("%s: point %d does not match the sweep's spec; the document was edited", path, i+1)
		}
	}
	return &Sweep{Spec: spec, Points: points, Doc: doc, Dir: dir}, nil
}

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
	// DropCaches empties the OS page cache; nil means DropPageCache.
	DropCaches func() error
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
	// Live, when set, follows each run as it happens; labels tell the
	// runs apart: the point, its parameters and the repetition.
	Live func(info workload.Info, r workload.Run, labels map[string]string) runner.Live
}

// DropPageCache writes back dirty pages and drops the clean ones, so a
// run reads from storage as the first run did. Only root may.
func DropPageCache() error {
	syncDisks()
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return reason(err)
	}
	defer f.Close()
	if _, err := f.WriteString("3\n"); err != nil {
		return reason(err)
	}
	return nil
}

// reason is what stopped a cache drop, in a few words.
func reason(err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return errors.New("not permitted (needs root)")
	case errors.Is(err, syscall.EROFS):
		return errors.New("/proc/sys is read-only here (a container?)")
	case errors.Is(err, os.ErrNotExist):
		return errors.New("no /proc/sys/vm/drop_caches on this OS")
	}
	return err
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
	started    time.Time
	runsDone   int // in this call, for the time-left estimate
}

func (s *Sweep) addNote(note string) {
	if !slices.Contains(s.Doc.Notes, note) {
		s.Doc.Notes = append(s.Doc.Notes, note)
	}
}

func (s *Sweep) save() error {
	if err := result.WriteSweep(s.Path(), s.Doc); err != nil {
		return fmt.Errorf("write %s: %w", s.Path(), err)
	}
	return nil
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
	r := &run{Sweep: s, o: o, url: s.Spec.Target.URL, started: o.Now(), built: map[string]bool{}}
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

// ServerBuild is one set of a managed server's binaries that a sweep
// runs, and the server, untouched, that runs them on the build's cluster.
type ServerBuild struct {
	// Name is the build's in target.servers; "" for a sweep's one build.
	Name    string
	Server  server.Server
	Version string
	// Dir is the cluster's directory. Builds of one data format share it,
	// so its schema is built once for all of them.
	Dir string
	// Err says why the binaries cannot be used (missing, no version).
	Err error
}

// ServerBuilds are the builds a managed sweep's points run, in the order
// of target.servers. A sweep without servers keeps its one cluster in
// DIR/server; otherwise each data format gets DIR/server-NAME, after its
// first build, so that a build that cannot read another's cluster gets
// its own, built from the same seed.
func (s *Sweep) ServerBuilds(ctx context.Context) ([]ServerBuild, error) {
	t := s.Spec.Target
	if len(t.Servers) == 0 {
		b, err := newBuild(ctx, t.Server, "", filepath.Join(s.Dir, "server"), t.PGBin)
		return []ServerBuild{b}, err
	}
	used := map[string]bool{}
	for _, p := range s.Points {
		used[s.Spec.BuildOf(p)] = true
	}
	var builds []ServerBuild
	clusters := map[[2]string]string{} // kind and data format: cluster directory
	for _, bin := range t.Servers {
		if !used[bin.Name] {
			continue
		}
		own := filepath.Join(s.Dir, "server-"+bin.Name)
		b, err := newBuild(ctx, bin.Kind, bin.Name, own, bin.Bin)
		if err != nil {
			return nil, err
		}
		format := ""
		if b.Err == nil {
			format, b.Err = b.Server.DataFormat(ctx)
		}
		if dir, ok := clusters[[2]string{bin.Kind, format}]; ok && b.Err == nil {
			// The kind was looked up by newBuild already.
			b.Server, _ = server.New(bin.Kind, dir, bin.Bin)
			b.Dir = dir
		} else if b.Err == nil {
			clusters[[2]string{bin.Kind, format}] = own
		}
		builds = append(builds, b)
	}
	return builds, nil
}

// newBuild is the server of kind in dir running the binaries in bin; a
// build whose version cannot be read has Err set.
func newBuild(ctx context.Context, kind, name, dir, bin string) (ServerBuild, error) {
	srv, err := server.New(kind, dir, bin)
	if err != nil {
		return ServerBuild{}, err
	}
	b := ServerBuild{Name: name, Server: srv, Dir: dir}
	b.Version, b.Err = srv.Version(ctx)
	return b, nil
}

// UsableServerBuilds are ServerBuilds, or a one-line refusal naming each
// build whose binaries cannot be used and what is missing.
func (s *Sweep) UsableServerBuilds(ctx context.Context) ([]ServerBuild, error) {
	builds, err := s.ServerBuilds(ctx)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, b := range builds {
		if b.Err == nil {
			continue
		}
		if b.Name == "" {
			return nil, b.Err
		}
		bad = append(bad, b.Name+": "+human.OneLine(b.Err))
	}
	if len(bad) > 0 {
		return nil, exitcode.Userf("%s: target.servers: %s", s.Spec.File, strings.Join(bad, "; "))
	}
	return builds, nil
}

// build is the point's build.
func (r *run) build(p Point) ServerBuild {
	name := r.Spec.BuildOf(p)
	return r.builds[slices.IndexFunc(r.builds, func(b ServerBuild) bool { return b.Name == name })]
}

// ServerSettingNames are the names of every server setting the sweep
// asks of build (one of target.servers, "" when it names none), for a
// check of names that starts nothing.
func (s *Sweep) ServerSettingNames(build string) []string {
	names := map[string]bool{}
	for _, p := range s.Points {
		if s.Spec.BuildOf(p) != build {
			continue
		}
		for name := range s.Spec.ServerSettings(p) {
			names[name] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// initServer checks every build and creates their clusters, all before
// anything is built or run.
func (r *run) initServer(ctx context.Context) error {
	builds, err := r.UsableServerBuilds(ctx)
	if err != nil {
		return err
	}
	r.builds, r.srv = builds, builds[0].Server
	var versions []string
	for _, b := range builds {
		if !slices.Contains(versions, b.Version) {
			versions = append(versions, b.Version)
		}
	}
	r.Doc.Target.Version = strings.Join(versions, ", ")
	for _, b := range builds {
		if err := r.initBuild(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// initBuild checks that build b can take its points' settings and
// confinements, and creates its cluster unless it exists.
func (r *run) initBuild(ctx context.Context, b ServerBuild) error {
	var points []map[string]string
	// Confine checks that this host can confine the server so, which it
	// must before anything is built; each start sets it again.
	checked := map[server.Confinement]bool{}
	for _, p := range r.Points {
		if r.Spec.BuildOf(p) != b.Name {
			continue
		}
		points = append(points, r.Spec.ServerSettings(p))
		if c := r.Spec.Confinement(p); !checked[c] {
			checked[c] = true
			if err := b.Server.Confine(c); err != nil {
				return err
			}
		}
	}
	if err := b.Server.Preflight(ctx, points); err != nil {
		return err
	}
	if !b.Server.Exists() {
		fmt.Fprintf(r.o.Log, "Creating a %s cluster in %s (%s)\n", r.Spec.KindOf(b.Name), b.Dir, b.Version)
	}
	if err := b.Server.Init(ctx); err != nil {
		return err
	}
	// A sweep killed outright leaves its server behind; the sweep cannot
	// know what state it is in, so the user stops it.
	if st, err := b.Server.Status(ctx); err == nil && st.State == server.Running {
		return exitcode.Userf("a server from an earlier run of this sweep is still running in %s: stop it with `dbrig server stop --dir %s`, then resume",
			b.Dir, b.Dir)
	}
	return nil
}

// stopServer stops a managed server and keeps each cluster's log beside
// the results (server.log, or server-NAME.log for several).
func (r *run) stopServer() error {
	if r.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := errors.Join(r.srv.Stop(ctx), r.unpin())
	for _, b := range r.builds {
		copyFile(b.Server.LogPath(), filepath.Join(r.Dir, filepath.Base(b.Dir)+".log"))
	}
	return err
}

// unpin gives the client back every CPU, as before the server's start.
func (r *run) unpin() error {
	if r.pin == nil {
		return nil
	}
	err := r.pin.Undo()
	r.pin = nil
	return err
}

// pinClient keeps the client off a confined server's CPUs, and notes it
// when there are none left to keep it on.
func (r *run) pinClient(cpus string) error {
	if cpus == "" {
		return nil
	}
	pin, err := server.PinClient(cpus)
	if err != nil {
		return err
	}
	r.pin = pin
	if pin.Note != "" {
		r.addNote(pin.Note)
	}
	return nil
}

func copyFile(from, to string) {
	b, err := os.ReadFile(from)
	if err == nil {
		_ = os.WriteFile(to, b, 0o644)
	}
}

// pointError records err against the point and makes it the sweep's
// one-line error, naming the point.
func (r *run) pointError(pi int, err error) error {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	r.Doc.Points[pi].Errors = append(r.Doc.Points[pi].Errors, msg)
	return exitcode.Userf("point %d (%s): %s; the sweep stopped there, results so far are in %s",
		pi+1, r.Points[pi].Label(), msg, r.Dir)
}

// startServer (re)starts the managed server when the point's build,
// settings or confinement differ from the running server's.
func (r *run) startServer(ctx context.Context, pi int) error {
	want := r.Spec.serverStart(r.Points[pi])
	if r.srv.Running() && r.running.same(want) {
		return nil
	}
	if r.t != nil {
		r.t.Close()
		r.t = nil
	}
	if r.srv.Running() {
		if err := errors.Join(r.srv.Stop(context.WithoutCancel(ctx)), r.unpin()); err != nil {
			return err
		}
	}
	b := r.build(r.Points[pi])
	r.srv = b.Server
	name := r.Spec.KindOf(b.Name)
	if b.Name != "" {
		name += " " + b.Name + " (" + b.Version + ")"
	}
	fmt.Fprintf(r.o.Log, "Starting %s with %s\n", name, settingsLine(want))
	if err := r.srv.Confine(want.confined); err != nil {
		return r.pointError(pi, err)
	}
	if err := r.srv.Start(ctx, want.settings); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return r.pointError(pi, err)
	}
	r.running = want
	if err := r.pinClient(want.confined.CPUs); err != nil {
		return err
	}
	st, err := r.srv.Status(ctx)
	if err != nil {
		return err
	}
	r.facts = telemetry.Server{PID: st.PID, MemoryLimit: want.confined.Memory, CPUs: want.confined.CPUs, MemoryCgroup: st.MemoryCgroup}
	if r.pin != nil {
		r.facts.ClientCPUs = r.pin.CPUs
	}
	if err := r.srv.CreateDB(ctx, DatabaseName); err != nil {
		return fmt.Errorf("create database %s: %w", DatabaseName, err)
	}
	r.url = r.srv.URLFor(DatabaseName)
	return nil
}

// settingsLine is "shared_buffers=1GB; memory 2GB, cpus 1".
func settingsLine(start *serverStart) string {
	line := "default settings"
	if len(start.settings) > 0 {
		line = result.Settings(start.settings)
	}
	if c := start.confined.String(); c != "" {
		line += "; " + c
	}
	return line
}

// noteMemory records how the database compares with the host's memory. A
// managed server's database that fits the OS page cache is read from
// memory even with a small buffer cache, which is the usual reason a
// buffer-cache sweep shows less than the classic studies did.
func (r *run) noteMemory(ctx context.Context) {
	size, err := r.t.Size(ctx)
	host := result.ReadHost()
	if err != nil || r.srv == nil || host.MemoryBytes == 0 {
		return
	}
	for _, n := range r.Doc.Notes {
		if strings.HasPrefix(n, "The database is ") {
			return // a resumed sweep noted it already
		}
	}
	gib := func(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
	var below []string
	for _, p := range r.Points {
		if m := r.Spec.Confinement(p).Memory; m > 0 && m < size {
			below = append(below, r.Spec.Label(p))
		}
	}
	if len(below) > 0 {
		r.addNote(fmt.Sprintf("The database is %s, more than the server's memory limit (page cache included) at %s: there the OS page cache cannot hold it, so what the buffer cache misses is read from the device.",
			gib(size), strings.Join(below, "; ")))
		return
	}
	if r.readsDirect(ctx) {
		r.addNote(fmt.Sprintf("The database is %s, and at every point the server reads its data files past the OS page cache (direct I/O): what the buffer cache misses is read from the device.",
			gib(size)))
		return
	}
	if size < host.MemoryBytes/2 {
		r.addNote(fmt.Sprintf("The database is %s and this host has %s of memory: it fits the OS page cache, so a buffer cache smaller than the database costs copies from the OS cache (re-read after each drop), not steady disk reads.",
			gib(size), gib(host.MemoryBytes)))
		return
	}
	r.addNote(fmt.Sprintf("The database is %s and this host has %s of memory.", gib(size), gib(host.MemoryBytes)))
}

// readsDirect reports whether every point's server reads its data files
// past the OS page cache.
func (r *run) readsDirect(ctx context.Context) bool {
	for _, p := range r.Points {
		d, ok := r.build(p).Server.(server.DirectReader)
		if !ok || !d.ReadsDirect(ctx, r.Spec.ServerSettings(p)) {
			return false
		}
	}
	return true
}

// ensureSchema builds the workload's schema unless it is there already,
// as after a resume or on an external target built beforehand. A workload
// with no build needs nothing.
func (r *run) ensureSchema(ctx context.Context) error {
	w, b, err := r.Spec.builder()
	if b == nil || err != nil {
		return err
	}
	opened, err := w.Open(ctx, r.t)
	if err == nil {
		opened.Close()
		return nil
	}
	if !errors.Is(err, workload.ErrNoSchema) {
		return err
	}
	var params []string
	for _, p := range r.Spec.Build {
		params = append(params, p.Name+"="+p.Value)
	}
	fmt.Fprintf(r.o.Log, "Building %s on %s (%s)\n", r.Spec.Workload, r.t.URL(), strings.Join(params, " "))
	bctx, cancel := r.stoppable(ctx)
	defer cancel()
	sum, err := b.Build(bctx, r.t, workload.BuildOptions{Progress: func(done, total int64, what string) {
		pct := 0.0
		if total > 0 {
			pct = float64(done) / float64(total) * 100
		}
		r.o.Progress(fmt.Sprintf("build %-8s %5.1f%%  %d of %d rows", what, pct, done, total))
	}})
	r.o.ProgressDone()
	if err != nil {
		if bctx.Err() != nil {
			return fmt.Errorf("build interrupted: %w", bctx.Err())
		}
		return err
	}
	fmt.Fprintf(r.o.Log, "Built %s: %d rows in %.1f s\n", r.Spec.Workload, sum.Rows, sum.Seconds)
	return nil
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
	if r.t == nil {
		if r.t, err = dbtarget.Open(ctx, r.url); err != nil {
			return false, err
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
	}
	cluster := ""
	if r.srv != nil {
		cluster = r.build(pt).Dir
	}
	if !r.built[cluster] {
		if err := r.ensureSchema(ctx); err != nil {
			return false, err
		}
		r.built[cluster] = true
		if r.Spec.Builds() {
			r.noteMemory(ctx)
		}
		if r.stopping(ctx) {
			return true, nil
		}
	}
	params := r.Spec.RunParams(pt)
	left := r.Spec.Estimate(r.Points, doc.Order, doc.Done, 0)
	fmt.Fprintf(r.o.Log, "run %d/%d: point %d (%s), repetition %d — about %s left\n",
		doc.Done+1, len(doc.Order), pi+1, r.Spec.Label(pt), rep, human.FormatDuration(left))

	// What the last run left the server to do (old row versions to
	// purge, dirty pages to write) is done now, not on this run's time.
	if st, ok := r.t.(dbtarget.Settler); ok {
		sctx, cancel := r.stoppable(ctx)
		line, err := st.Settle(sctx)
		cancel()
		switch {
		case err != nil && sctx.Err() != nil:
			return true, nil
		case err != nil && !r.settleNote:
			r.settleNote = true
			r.addNote("the server was not settled between runs: " + err.Error())
			fmt.Fprintf(r.o.Log, "dbrig: the server was not settled between runs: %v\n", err)
		case err == nil:
			fmt.Fprintf(r.o.Log, "settled: %s\n", line)
		}
	}

	// Only a managed server is known to share this host's page cache; an
	// external target's host is out of reach, and dropping ours would only
	// slow everything else down.
	dropErr := errors.New("the target is external, and its host's cache is out of dbrig's reach")
	if r.srv != nil {
		dropErr = r.o.DropCaches()
	}
	if dropErr != nil && !r.dropNote {
		r.dropNote = true
		r.addNote("OS page cache not dropped between runs: " + dropErr.Error())
		fmt.Fprintf(r.o.Log, "dbrig: OS page cache not dropped between runs: %v\n", dropErr)
	}
	if lookup(params, "prewarm") == PrewarmFull {
		// The spec was refused unless the target's kind can prewarm.
		pw, ok := r.t.(dbtarget.Prewarmer)
		if !ok {
			return false, r.pointError(pi, fmt.Errorf("prewarm: a %s target cannot warm its cache", r.t.Kind()))
		}
		pctx, cancel := r.stoppable(ctx)
		res, err := pw.Prewarm(pctx)
		cancel()
		if err != nil {
			if pctx.Err() != nil {
				return true, nil
			}
			return false, r.pointError(pi, fmt.Errorf("prewarm: %w", err))
		}
		doc.Points[pi].Resident = append(doc.Points[pi].Resident, res.Fraction)
		fmt.Fprintf(r.o.Log, "prewarm: %.1f%% of %s pages resident\n", res.Fraction*100, human.Thousands(float64(res.Blocks)))
	}

	docPath, err := r.measure(ctx, pi, rep, params)
	if err != nil {
		if ctx.Err() != nil && docPath == "" {
			return true, nil
		}
		if isUser(err) {
			return false, r.pointError(pi, err)
		}
		if r.srv != nil {
			// A run that fails because the server died says so.
			if st, serr := r.srv.Status(context.WithoutCancel(ctx)); serr == nil && st.State == server.Crashed {
				return false, r.pointError(pi, fmt.Errorf("the server crashed: %s (run error: %v)", st.Reason, err))
			}
		}
		r.Doc.Points[pi].Errors = append(r.Doc.Points[pi].Errors, err.Error())
		return false, err
	}
	if docPath == "" {
		return true, nil
	}
	r.runsDone++
	return false, nil
}

// measure does one run and files its document. An interrupted run's
// document is kept under its own name and counts for nothing; path is
// then "".
func (r *run) measure(ctx context.Context, pi, rep int, params []Param) (string, error) {
	w, opt, err := r.Spec.configure(params)
	if err != nil {
		return "", err
	}
	opened, err := w.Open(ctx, r.t)
	if err != nil {
		return "", err
	}
	defer opened.Close()
	if len(r.Spec.With) > 0 {
		groups := []workload.Group{{W: w, Run: opened, VUs: opt.VUs}}
		for _, g := range r.Spec.With {
			vus, _ := strconv.Atoi(g.Value) // checked with the spec
			og, err := workload.OpenGroup(ctx, r.t, g.Name, vus)
			if err != nil {
				return "", err
			}
			defer og.Run.Close()
			groups = append(groups, og)
		}
		mixed := workload.NewMixed(groups)
		w, opened, opt.VUs = mixed, mixed, mixed.VUs()
	}
	opt.Progress = r.o.Progress
	opt.Telemetry.Server = r.facts
	opt.Warn = func(msg string) { fmt.Fprintln(r.o.Log, "dbrig: "+msg) }
	if r.o.Live != nil {
		opt.Live = r.o.Live(w.Info(), opened, map[string]string{
			"point": strconv.Itoa(pi + 1), "params": r.Points[pi].Label(), "repetition": strconv.Itoa(rep),
		})
	}
	d, err := runner.Run(ctx, r.t, w, opened, opt)
	r.o.ProgressDone()
	if err != nil {
		return "", err
	}
	doc := r.Doc
	rel := filepath.Join("runs", fmt.Sprintf("p%02d-r%d.json", pi+1, rep))
	switch {
	case d.ServerLost != nil:
		rel = filepath.Join("runs", fmt.Sprintf("p%02d-r%d-lost.json", pi+1, rep))
	case d.Interrupted:
		rel = filepath.Join("runs", fmt.Sprintf("p%02d-r%d-interrupted.json", pi+1, rep))
	}
	if err := result.Write(filepath.Join(r.Dir, rel), d); err != nil {
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if d.ServerLost != nil {
		// Every run after it would fail the same way.
		return "", fmt.Errorf("run %d (point %d, repetition %d) lost its server %.1f s in: %s is kept but not counted; once the server is back, a resume runs it again",
			doc.Done+1, pi+1, rep, d.ServerLost.At, rel)
	}
	if d.Interrupted {
		r.addNote(fmt.Sprintf("run %d (point %d, repetition %d) was interrupted; %s is kept but not counted, and a resume runs it again",
			doc.Done+1, pi+1, rep, rel))
		return "", nil
	}
	pt := &doc.Points[pi]
	pt.Runs[rep-1] = rel
	if r.Spec.BuildOf(r.Points[pi]) != "" {
		pt.ServerVersion = d.Target.Version
	}
	for _, m := range d.Metrics {
		// A metric neither side could measure (a cache miss on a database
		// that counts none) has no value to average.
		if v := m.Value(); !math.IsNaN(v) {
			pt.Values[m.Key] = append(pt.Values[m.Key], v)
		}
	}
	pt.P95 = append(pt.P95, primaryP95(d))
	if d.Telemetry != nil {
		sum := telemetry.Summarize(d.Telemetry)
		for _, e := range telemetry.Explains {
			if v, ok := e.Value(sum); ok {
				if pt.Telemetry == nil {
					pt.Telemetry = map[string][]float64{}
				}
				pt.Telemetry[e.Key] = append(pt.Telemetry[e.Key], v)
			}
		}
	}
	doc.Done++
	result.Recompute(doc)
	return rel, r.save()
}

// primaryP95 is the p95 latency of the run's primary transaction, else of
// the first type the workload names.
func primaryP95(d *result.Document) float64 {
	for _, tx := range d.Transactions {
		if tx.Name == d.PrimaryTx {
			return tx.Latency.P95
		}
	}
	if len(d.Transactions) > 0 {
		return d.Transactions[0].Latency.P95
	}
	return 0
}
