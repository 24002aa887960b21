package telemetry

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/dbrig/dbrig/internal/human"
)

// Defaults of a run's telemetry.
const (
	DefaultInterval  = time.Second
	DefaultSessionHz = 10
	// sourceTimeout bounds one read of the database's side, so that a
	// server that stops answering cannot hold up the run's end.
	sourceTimeout = 5 * time.Second
)

// Recorder samples the host and a database for the length of a run.
// A nil *Recorder records nothing; its methods are safe to call.
type Recorder struct {
	cfg     Config
	started time.Time
	host    *Host
	src     Source

	mu      sync.Mutex
	rec     Recording
	bucket  SessionBucket
	edges   [2][]Table
	hasEdge [2]bool
	// embedded: the source's database runs in this process.
	embedded bool
	// others are the other clients' sessions seen in the window, by ID,
	// with their client's name; othersRead says the source read them at
	// an edge, so that they are known.
	others     map[string]string
	othersRead bool
	// lastRead is when the database was last read (hasRead: if ever);
	// gapFrom is when the open gap began, negative with none open.
	// lostRead: the last read closed a gap only because the host lost the
	// server in its sample, which may have come after the read.
	lastRead, gapFrom float64
	hasRead, lostRead bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
	// cost is the samplers' own CPU, written under mu; costOK false once
	// a thread's CPU time could not be read.
	cost   Cost
	costOK bool
}

// Start begins recording; started is the run's start, the zero of every
// time in the recording. src may be nil (a target without a database
// side). With cfg.Off it returns nil.
func Start(ctx context.Context, cfg Config, src Source, started time.Time) *Recorder {
	if cfg.Off {
		return nil
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	r := &Recorder{cfg: cfg, started: started, src: src, gapFrom: -1}
	r.rec = Recording{Interval: cfg.Interval.Seconds(), Unavailable: map[string]string{}}
	ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if src != nil {
		r.readSettings(ctx)
	} else {
		r.rec.Unavailable["database"] = "the target offers no database telemetry"
	}
	var nodes []Node
	if src != nil && !r.embedded {
		nodes, _ = r.readNodes(ctx)
	}
	r.host = NewHost(HostConfig{
		ServerPID: r.cfg.Server.PID, Nodes: nodes, DataPath: r.cfg.Server.DataPath, ServerCgroup: r.cfg.Server.MemoryCgroup, Perf: true,
	})
	facts := r.host.Facts()
	// What the caller knows wins over what the host found.
	if cfg.Server.MemoryLimit > 0 {
		facts.ServerMemoryLimit = cfg.Server.MemoryLimit
	}
	if cfg.Server.CPUs != "" {
		facts.ServerCPUs = cfg.Server.CPUs
	}
	facts.ClientCPUs, facts.Embedded = cfg.Server.ClientCPUs, r.embedded
	r.rec.Host = &HostRecord{Facts: facts, CStates: r.host.CStates(), Samples: []HostSample{}}
	for k, v := range r.host.Unavailable() {
		if _, ok := r.rec.Unavailable[k]; !ok {
			r.rec.Unavailable[k] = v
		}
	}
	r.sample(ctx, false)
	r.costOK = true
	r.wg.Add(1)
	go r.every(ctx, cfg.Interval, &r.cost.Samples, func() bool {
		r.sample(ctx, true)
		return true
	})
	if src != nil && cfg.SessionHz > 0 {
		r.rec.DB.Sessions = &SessionHistory{Hz: cfg.SessionHz, Buckets: []SessionBucket{}}
		r.wg.Add(1)
		go r.every(ctx, time.Duration(float64(time.Second)/cfg.SessionHz), &r.cost.Sessions, func() bool { return r.sampleSessions(ctx) })
	}
	return r
}

// readSettings records the database's version and settings, and where
// its server runs when that is this host.
func (r *Recorder) readSettings(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, sourceTimeout)
	defer cancel()
	version, settings, err := r.src.Settings(rctx)
	r.rec.DB = &DBRecord{Version: version, Settings: settings, Samples: []DBSample{}}
	r.note("database_settings", err)
	pid, dir, err := r.src.Local(rctx)
	r.note("server_process", err)
	if pid == Embedded {
		r.embedded = true
		r.note("server_cpu", errors.New("the database runs inside the client: its CPU time is the client's"))
	} else if r.cfg.Server.PID == 0 {
		r.cfg.Server.PID = pid
	}
	if r.cfg.Server.DataPath == "" {
		r.cfg.Server.DataPath = dir
	}
}

// readNodes asks a source whose server is one node of several for them
// all; false where it is not one, or could not tell.
func (r *Recorder) readNodes(ctx context.Context) ([]Node, bool) {
	ns, ok := r.src.(NodeSource)
	if !ok {
		return nil, false
	}
	rctx, cancel := context.WithTimeout(ctx, sourceTimeout)
	defer cancel()
	nodes, err := ns.Nodes(rctx)
	r.note(nodesKey, err)
	return nodes, err == nil
}

// nodesKey is what Recording.Unavailable names a failed read of the
// nodes under.
const nodesKey = "nodes"

// note records why something could not be read, once per thing.
func (r *Recorder) note(what string, err error) {
	if err == nil {
		return
	}
	if _, seen := r.rec.Unavailable[what]; !seen {
		r.rec.Unavailable[what] = human.OneLine(err)
	}
}

func (r *Recorder) since() float64 { return time.Since(r.started).Seconds() }

// every calls f each period until ctx ends or f returns false, adding
// the CPU time each call takes to *cost. The goroutine keeps a thread of
// its own, so that the thread's CPU time is f's, cold caches and all.
func (r *Recorder) every(ctx context.Context, period time.Duration, cost *float64, f func() bool) {
	defer r.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			before, ok1 := threadCPU()
			more := f()
			after, ok2 := threadCPU()
			r.mu.Lock()
			*cost += (after - before).Seconds()
			r.costOK = r.costOK && ok1 && ok2
			r.mu.Unlock()
			if !more {
				return
			}
		}
	}
}

// sample reads the host and the database's counters once; the host's
// first reading only primes its deltas. It returns the sample's time.
func (r *Recorder) sample(ctx context.Context, keep bool) float64 {
	var counters map[string]float64
	var replicas []Replica
	var members []Member
	var err, replicasErr, membersErr error
	pid := 0
	// read is when the database's counters were answered: the replicas
	// and the server's process are asked after, and on a server lost just
	// then wait out their timeout, which would move a reading taken
	// before the loss past it.
	var read float64
	if r.src != nil {
		rctx, cancel := context.WithTimeout(ctx, r.readTimeout())
		counters, err = r.src.Counters(rctx)
		read = r.since()
		if rs, ok := r.src.(ReplicaSource); ok && err == nil {
			replicas, replicasErr = rs.Replicas(rctx)
		}
		if ms, ok := r.src.(MemberSource); ok && err == nil {
			members, membersErr = ms.Members(rctx)
		}
		if err == nil && r.serverGone() {
			pid = r.findServer(rctx)
		}
		cancel()
	}
	var nodes []Node
	relearnt := err == nil && r.afterGap() && !r.embedded
	if relearnt {
		nodes, relearnt = r.readNodes(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.since()
	if pid > 0 {
		r.host.Follow(pid)
	}
	if relearnt {
		r.host.SetNodes(nodes)
	}
	watched := !r.host.ServerGone()
	if hs, ok := r.host.Sample(time.Now()); ok && keep {
		hs.T = t
		r.rec.Host.Samples = append(r.rec.Host.Samples, hs)
	}
	if r.src != nil {
		r.gap(read, err == nil, pid, watched && r.host.ServerGone())
	}
	r.note("database_counters", err)
	r.note(replicasKey, replicasErr)
	r.note(membersKey, membersErr)
	if counters != nil {
		r.rec.DB.Samples = append(r.rec.DB.Samples, DBSample{T: read, Counters: counters})
		r.rec.DB.addReplicas(read, replicas)
		r.rec.DB.addMembers(read, members)
	}
	if r.rec.DB != nil && r.rec.DB.Sessions != nil && r.bucket.Samples > 0 {
		r.bucket.T = t
		r.rec.DB.Sessions.Buckets = append(r.rec.DB.Sessions.Buckets, r.bucket)
		r.bucket = SessionBucket{}
	}
	return t
}

// serverGone says the host lost the server's process.
func (r *Recorder) serverGone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.host.ServerGone()
}

// afterGap says the database's side is read again after a gap, or after
// the host lost the server's process: a failover may have changed the
// server's nodes, or their processes.
// readTimeout bounds a sample's read of the database to two intervals
// (at least a second, at most sourceTimeout), past which the sample is
// late and counts as a gap anyway, and within a gap (the server down, or
// being replaced) to one: the host's side, sampled after it, then keeps
// its pace while the database's reconnects fail, and a failover is when
// what the host did matters most.
func (r *Recorder) readTimeout() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	interval := time.Duration(r.rec.Interval * float64(time.Second))
	if r.gapFrom >= 0 {
		return min(sourceTimeout, max(interval, 100*time.Millisecond))
	}
	return min(sourceTimeout, max(2*interval, time.Second))
}

func (r *Recorder) afterGap() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gapFrom >= 0 || r.host.ServerGone()
}

// findServer asks the source where the server's process is, after the
// one the host watched went away; 0 when it does not say.
func (r *Recorder) findServer(ctx context.Context) int {
	pid, _, err := r.src.Local(ctx)
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// gap opens a gap at the last read when the database could not be read
// at t, and closes it at t when it could. A read makes one too when it
// comes more than two intervals after the last, or in the sample in which
// the host lost the server (lost): it may have waited for a server that
// was restarting, and read the new one. pid is the server's new process,
// found at t: it belongs to the gap just closed, or makes one of its own,
// since the host lost the server even if the reads missed it. When the
// read after a lost one fails, the lost one was of the server the host
// lost, not of a new one, and the gap it closed goes on. Called under mu.
func (r *Recorder) gap(t float64, read bool, pid int, lost bool) {
	if !read {
		if r.gapFrom < 0 {
			r.gapFrom = r.lastRead
			// The read before was of the server the host then lost, not of
			// one that came back: the gap it closed goes on.
			if n := len(r.rec.Gaps); r.lostRead && n > 0 && r.rec.Gaps[n-1].To == r.lastRead {
				r.gapFrom = r.rec.Gaps[n-1].From
				r.rec.Gaps = r.rec.Gaps[:n-1]
			}
		}
		return
	}
	overdue := r.hasRead && t-r.lastRead > 2*r.rec.Interval
	gaps := r.rec.Gaps
	r.lostRead = false
	switch {
	case r.gapFrom >= 0 || overdue || r.hasRead && lost:
		from := r.gapFrom
		if from < 0 {
			from = r.lastRead
		}
		r.lostRead = r.gapFrom < 0 && !overdue && pid == 0
		r.rec.Gaps = append(gaps, Gap{From: from, To: t, ServerPID: pid})
		r.gapFrom = -1
	case pid > 0 && len(gaps) > 0 && gaps[len(gaps)-1].To == r.lastRead:
		gaps[len(gaps)-1].ServerPID = pid
	case pid > 0:
		r.rec.Gaps = append(gaps, Gap{From: r.lastRead, To: t, ServerPID: pid})
	}
	r.lastRead, r.hasRead = t, true
}

// sampleSessions samples the active sessions once; false once the
// database turns out to have no such view.
func (r *Recorder) sampleSessions(ctx context.Context) bool {
	rctx, cancel := context.WithTimeout(ctx, sourceTimeout)
	ss, err := r.src.Sessions(rctx)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case errors.Is(err, ErrUnsupported):
		r.rec.DB.Sessions = nil
		r.note("sessions", err)
		return false
	case err == nil:
		r.count(ss)
	case ctx.Err() == nil:
		r.note("sessions", err)
	}
	return true
}

// count adds one sampling of the sessions to the open bucket.
func (r *Recorder) count(ss []Session) {
	b := &r.bucket
	b.Samples++
	for _, s := range ss {
		r.categorize(s)
		if s.Background {
			b.countBackground(s)
			continue
		}
		if b.Counts == nil {
			b.Counts = map[string]int{}
		}
		b.Counts[s.Class+"/"+s.Event]++
		if s.Other && r.hasEdge[0] && !r.hasEdge[1] {
			r.other(s)
		}
		if s.QueryID != "" {
			if b.Queries == nil {
				b.Queries = map[string]int{}
			}
			b.Queries[s.QueryID]++
		}
	}
}

// other records another client's session seen in the window. Called
// under mu.
func (r *Recorder) other(s Session) {
	if r.others == nil {
		r.others = map[string]string{}
	}
	r.others[s.ID] = s.Client
}

// readOthers reads the other clients' sessions at an edge of the window.
func (r *Recorder) readOthers(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, sourceTimeout)
	ss, err := r.src.Others(rctx)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.note(OtherSessions, err)
	if err != nil {
		return
	}
	r.othersRead = true
	for _, s := range ss {
		r.other(s)
	}
}

// othersSeen is what the recording says of the other clients' sessions:
// nil where the source never read them. Called once the samplers stopped.
func (r *Recorder) othersSeen() *Others {
	if !r.othersRead {
		return nil
	}
	o := &Others{Sessions: len(r.others)}
	for _, client := range r.others {
		if o.Clients == nil {
			o.Clients = map[string]int{}
		}
		o.Clients[client]++
	}
	return o
}

// categorize records the category of s's wait, the first time it is seen.
func (r *Recorder) categorize(s Session) {
	if s.Category == "" {
		return
	}
	h := r.rec.DB.Sessions
	key := s.Class + "/" + s.Event
	if _, ok := h.Categories[key]; ok {
		return
	}
	if h.Categories == nil {
		h.Categories = map[string]string{}
	}
	h.Categories[key] = s.Category
}

func (b *SessionBucket) countBackground(s Session) {
	if b.Background == nil {
		b.Background = map[string]map[string]int{}
	}
	kind := b.Background[s.Backend]
	if kind == nil {
		kind = map[string]int{}
		b.Background[s.Backend] = kind
	}
	kind[s.Class+"/"+s.Event]++
}

// Edge marks the start (start true) or the end of the measured window:
// it samples at once, so that the window's figures begin and end with it,
// and reads the database's breakdowns, each read within ctx (the run's
// edge's, which a server that stopped answering has already ended: the
// host is still sampled).
func (r *Recorder) Edge(ctx context.Context, start bool) {
	if r == nil {
		return
	}
	var tables []Table
	var err error
	var t float64
	// The tables' reads may run in the measured database: they come
	// before the sample that opens the window and after the one that
	// closes it, so that the counters never count them.
	if !start {
		t = r.sample(ctx, true)
	}
	if r.src != nil {
		rctx, cancel := context.WithTimeout(ctx, sourceTimeout)
		tables, err = r.src.Tables(rctx)
		cancel()
		r.readOthers(ctx)
	}
	if start {
		t = r.sample(ctx, true)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i := 1
	if start {
		i = 0
	}
	r.rec.Window[i] = t
	r.edges[i], r.hasEdge[i] = tables, true
	r.note("database_tables", err)
}

// Stop ends the recording and returns it, with the breakdowns taken over
// the measured window.
func (r *Recorder) Stop() *Recording {
	if r == nil {
		return nil
	}
	r.cancel()
	r.wg.Wait()
	r.host.Close()
	if r.src != nil {
		r.src.Close()
	}
	if !r.hasEdge[1] {
		r.rec.Window[1] = r.since()
	}
	if r.rec.DB != nil && r.hasEdge[0] && r.hasEdge[1] {
		r.rec.DB.Tables = Diff(r.edges[0], r.edges[1])
	}
	r.closeGaps()
	r.rec.Others = r.othersSeen()
	if len(r.rec.Unavailable) == 0 {
		r.rec.Unavailable = nil
	}
	if r.costOK {
		r.rec.Cost = &r.cost
	}
	return &r.rec
}

// closeGaps ends a gap still open at the recording's end (a server that
// never came back) there. A database read on both sides of its gaps was
// recorded, so the errors of reads in them are not its reason for
// missing: the gaps say what was.
func (r *Recorder) closeGaps() {
	if r.src != nil && r.gapFrom >= 0 {
		r.rec.Gaps = append(r.rec.Gaps, Gap{From: r.gapFrom, To: r.since()})
	}
	if len(r.rec.Gaps) == 0 || r.rec.DB == nil {
		return
	}
	if len(r.rec.DB.Samples) > 0 {
		delete(r.rec.Unavailable, "database_counters")
	}
	if len(r.rec.DB.Members) > 0 {
		delete(r.rec.Unavailable, membersKey)
	}
	if len(r.rec.DB.Replicas) > 0 {
		delete(r.rec.Unavailable, replicasKey)
	}
	if r.rec.DB.Sessions != nil && len(r.rec.DB.Sessions.Buckets) > 0 {
		delete(r.rec.Unavailable, "sessions")
	}
}

// Diff is each table of end minus its start, row by row (matched by
// labels). A row new at the end counts from zero, and so does a value
// below its start: the server restarted after a crash, which forgets
// its statistics. Rows that did not change are left out.
func Diff(start, end []Table) []Table {
	before := map[string]map[string][]float64{}
	for _, t := range start {
		rows := map[string][]float64{}
		for _, row := range t.Rows {
			rows[rowKey(row.Labels)] = row.Values
		}
		before[t.Name] = rows
	}
	var out []Table
	for _, t := range end {
		d := t
		d.Rows = nil
		for _, row := range t.Rows {
			prev := before[t.Name][rowKey(row.Labels)]
			vals := make([]float64, len(row.Values))
			changed := false
			for i, v := range row.Values {
				if i < len(prev) && v >= prev[i] {
					v -= prev[i]
				}
				vals[i] = v
				changed = changed || v != 0
			}
			if changed {
				d.Rows = append(d.Rows, Row{Labels: row.Labels, Values: vals, Text: row.Text})
			}
		}
		out = append(out, d)
	}
	return out
}

func rowKey(labels []string) string {
	k := ""
	for _, l := range labels {
		k += l + "\x00"
	}
	return k
}
