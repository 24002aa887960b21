package driver

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pooled is a Pooled workload whose sessions take service to run a
// transaction and whose terminals think before each: it counts how many
// sessions run at once, what each terminal was served, and, as lagging
// does, publishes its transactions late unless a session is flushed.
type pooled struct {
	service, think time.Duration
	inRun, maxRun  atomic.Int32
	served         []atomic.Int64 // by terminal
	published      atomic.Int64
	mu             sync.Mutex
	flushes        map[*pooledSession]int
}

func newPooled(terminals int, service, think time.Duration) *pooled {
	return &pooled{service: service, think: think, served: make([]atomic.Int64, terminals), flushes: map[*pooledSession]int{}}
}

func (w *pooled) TxNames() []string    { return []string{"a"} }
func (w *pooled) TallyNames() []string { return []string{"runs"} }
func (w *pooled) NewVU(context.Context, int) (VU, error) {
	return nil, errors.New("pooled runs only")
}
func (w *pooled) NewTerminal(id int) Terminal { return &pooledTerm{id: id, think: w.think} }
func (w *pooled) NewSession(context.Context, int) (Session, error) {
	return &pooledSession{w: w}, nil
}

type pooledTerm struct {
	id    int
	think time.Duration
}

func (t *pooledTerm) Next() int                                { return 0 }
func (t *pooledTerm) Pacing(int) (before, after time.Duration) { return t.think, 0 }

type pooledSession struct {
	w       *pooled
	pending int64
}

func (s *pooledSession) Run(_ context.Context, term Terminal, _ int, t Tally) error {
	n := s.w.inRun.Add(1)
	raise(&s.w.maxRun, n)
	time.Sleep(s.w.service)
	s.w.inRun.Add(-1)
	s.w.served[term.(*pooledTerm).id].Add(1)
	t[0]++
	if s.pending++; s.pending%7 == 0 {
		s.publish()
	}
	return nil
}

func (s *pooledSession) publish() {
	s.w.published.Add(s.pending)
	s.pending = 0
}

func (s *pooledSession) Flush(context.Context) error {
	s.publish()
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	s.w.flushes[s]++
	return nil
}
func (s *pooledSession) Reconnect(context.Context) error { return nil }
func (s *pooledSession) Close() error                    { return nil }

// TestPoolLendsAtMostM: 200 terminals on 4 sessions never run more than 4
// transactions at once, the pool reports all 4 in use, every terminal is
// served (the queue is first come, first served), and every completed
// transaction has its wait recorded.
func TestPoolLendsAtMostM(t *testing.T) {
	w := newPooled(200, 2*time.Millisecond, 20*time.Millisecond)
	var ticks []Tick
	// 1.8 s of window: the series and the progress tick once a second,
	// so a run of one second may end, on a slow machine, before its first.
	res, err := Run(context.Background(), w, Config{VUs: 200, Connections: 4, Rampup: 200 * time.Millisecond,
		Duration: 1800 * time.Millisecond, Classify: classify, Progress: func(tk Tick) { ticks = append(ticks, tk) }})
	if err != nil {
		t.Fatal(err)
	}
	if m := w.maxRun.Load(); m > 4 {
		t.Errorf("%d transactions ran at once on 4 sessions", m)
	}
	p := res.Pool
	if p == nil || p.Terminals != 200 || p.Sessions != 4 || p.InUseMax != 4 || p.InUseP95 != 4 {
		t.Fatalf("pool %+v, want 200 terminals on 4 sessions, all 4 in use", p)
	}
	for i := range w.served {
		if w.served[i].Load() == 0 {
			t.Fatalf("terminal %d was never served", i)
		}
	}
	if c := res.Tx[0].Count; c == 0 || p.Wait.TotalCount() != c || res.Tally[0] < c {
		t.Errorf("%d transactions, %d waits, tally %v; want a wait for each", c, p.Wait.TotalCount(), res.Tally)
	}
	if p.QueuedMax == 0 {
		t.Error("no terminal ever queued, on a pool that was full")
	}
	if len(ticks) == 0 || ticks[0].VUs != 200 {
		t.Errorf("ticks %+v, want the 200 terminals started by the first", ticks)
	}
	var waits int
	for _, wt := range p.Waits {
		if wt != nil {
			waits++
		}
	}
	if len(p.Waits) != len(res.Series) {
		t.Errorf("%d seconds of waits for %d points", len(p.Waits), len(res.Series))
	}
	if waits == 0 {
		t.Error("no second of the series has its waits")
	}
}

// TestPoolResponseIncludesWait: five terminals sent together to one
// session of 10 ms each: the last is answered after about 50 ms, of which
// it waited 40 for the session.
func TestPoolResponseIncludesWait(t *testing.T) {
	w := newPooled(5, 10*time.Millisecond, 300*time.Millisecond)
	res, err := Run(context.Background(), w, Config{VUs: 5, Connections: 1, Duration: 500 * time.Millisecond, Classify: classify})
	if err != nil {
		t.Fatal(err)
	}
	h, wait := res.Tx[0].Hist, res.Pool.Wait
	if h.TotalCount() != 5 || wait.TotalCount() != 5 {
		t.Fatalf("%d responses, %d waits; want the 5 sent", h.TotalCount(), wait.TotalCount())
	}
	took, waited := time.Duration(h.Max())*time.Microsecond, time.Duration(wait.Max())*time.Microsecond
	if took < 48*time.Millisecond || waited < 38*time.Millisecond || took-waited < 9*time.Millisecond || took > time.Second {
		t.Errorf("slowest response %s, longest wait %s; want about 50 ms of which 40 waited", took, waited)
	}
}

// TestPoolEdges: each session is flushed as it opens and at each edge
// once, the counter read at each edge holds exactly what the client counts
// on the same side of it, and an edge that takes 600 ms to read adds
// nothing to the waits of the terminals queued through it. The hold is
// long beside the bound (600 ms against 400), so that a starved machine's
// scheduling delays cannot pass for it.
func TestPoolEdges(t *testing.T) {
	w := newPooled(50, time.Millisecond, 5*time.Millisecond)
	var marks []int64
	res, err := Run(context.Background(), w, Config{VUs: 50, Connections: 3, Rampup: 100 * time.Millisecond,
		Duration: 600 * time.Millisecond, Classify: classify,
		WindowEdge: func(context.Context, bool) error {
			time.Sleep(600 * time.Millisecond)
			marks = append(marks, w.published.Load())
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 2 || res.Tx[0].Count == 0 {
		t.Fatalf("marks %v, %d transactions", marks, res.Tx[0].Count)
	}
	if db := marks[1] - marks[0]; db != res.Tx[0].Count {
		t.Errorf("%d transactions published over the window, %d counted by the client", db, res.Tx[0].Count)
	}
	if len(w.flushes) != 3 {
		t.Errorf("%d sessions flushed, want 3", len(w.flushes))
	}
	for _, n := range w.flushes {
		if n != 3 {
			t.Errorf("a session flushed %d times, want 3: as it opened and at each edge", n)
		}
	}
	if took, waited := time.Duration(res.Tx[0].Hist.Max())*time.Microsecond, time.Duration(res.Pool.Wait.Max())*time.Microsecond; took > 400*time.Millisecond || waited > 400*time.Millisecond {
		t.Errorf("slowest response %s, longest wait %s: the edge's 600 ms hold was counted", took, waited)
	}
}

// faulty's pooled form: a terminal that thinks 10 ms, sessions on the
// pretend server.
func (f *faulty) NewTerminal(int) Terminal { return &pooledTerm{think: 10 * time.Millisecond} }
func (f *faulty) NewSession(context.Context, int) (Session, error) {
	return &faultySession{faultyVU{f}}, nil
}

type faultySession struct{ faultyVU }

func (s *faultySession) Run(ctx context.Context, _ Terminal, tx int, t Tally) error {
	return s.faultyVU.Run(ctx, tx, t)
}

// TestPoolOutage: a server away for 300 ms is one outage that the pool
// rides out, terminals queueing meanwhile; one away for good ends the run
// LostAfter later as lost.
func TestPoolOutage(t *testing.T) {
	f := &faulty{}
	f.at(400*time.Millisecond, true, false)
	f.at(700*time.Millisecond, false, false)
	res, err := Run(context.Background(), f, Config{VUs: 40, Connections: 2, Rampup: 100 * time.Millisecond,
		Duration: 1200 * time.Millisecond, Classify: classify, LostAfter: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerLost || len(res.Outages) != 1 || res.Tx[0].Count == 0 || res.ErrorClasses["connection_lost"] == 0 {
		t.Fatalf("lost %v, outages %+v, %d transactions, errors %v; want one outage ridden out", res.ServerLost, res.Outages, res.Tx[0].Count, res.ErrorClasses)
	}
	if res.Pool.QueuedMax < 10 {
		t.Errorf("at most %d terminals queued, want them piling up while the sessions reconnected", res.Pool.QueuedMax)
	}

	f = &faulty{}
	f.at(400*time.Millisecond, true, false)
	started := time.Now()
	res, err = Run(context.Background(), f, Config{VUs: 40, Connections: 2, Rampup: 100 * time.Millisecond,
		Duration: time.Minute, Classify: classify, LostAfter: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ServerLost || len(res.Outages) != 1 || time.Since(started) > 10*time.Second {
		t.Errorf("lost %v, outages %+v after %s; want the server given up", res.ServerLost, res.Outages, time.Since(started))
	}
}

// TestPoolStall: every session stuck in a transaction is a stall; the
// terminals queued behind them are not what makes it one.
func TestPoolStall(t *testing.T) {
	f := &faulty{}
	f.at(300*time.Millisecond, false, true)
	f.at(1300*time.Millisecond, false, false)
	res, err := Run(context.Background(), f, Config{VUs: 40, Connections: 2, Duration: 1600 * time.Millisecond,
		Classify: classify, StallAfter: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stalls) != 1 || len(res.Outages) != 0 {
		t.Fatalf("stalls %+v, outages %+v; want one stall", res.Stalls, res.Outages)
	}
}

// TestPoolVerdict: 100 terminals thinking 50 ms on one session of 5 ms
// are a pool too small, and the result says so; the same on 100 sessions
// says nothing.
func TestPoolVerdict(t *testing.T) {
	for _, sessions := range []int{1, 100} {
		w := newPooled(100, 5*time.Millisecond, 50*time.Millisecond)
		res, err := Run(context.Background(), w, Config{VUs: 100, Connections: sessions, Rampup: 100 * time.Millisecond,
			Duration: 1500 * time.Millisecond, Classify: classify})
		if err != nil {
			t.Fatal(err)
		}
		v := res.Pool.Verdict()
		t.Logf("%d sessions: %q", sessions, v)
		if sessions == 1 && !strings.HasPrefix(v, "The 1 session was all in use") {
			t.Errorf("1 session: verdict %q, pool %+v; want it too small", v, *res.Pool)
		}
		if sessions == 100 && v != "" {
			t.Errorf("100 sessions: verdict %q, want none", v)
		}
	}
}

// TestPoolRefusals: a pool needs a workload whose VUs can share sessions,
// no more sessions than VUs, and a timed run.
func TestPoolRefusals(t *testing.T) {
	for _, c := range []struct {
		w   Workload
		cfg Config
	}{
		{&scripted{}, Config{VUs: 4, Connections: 2, Duration: time.Second}},
		{newPooled(4, 0, 0), Config{VUs: 4, Connections: 5, Duration: time.Second}},
		{newPooled(4, 0, 0), Config{VUs: 4, Connections: 2, Each: 3}},
	} {
		if _, err := Run(context.Background(), c.w, c.cfg); err == nil {
			t.Errorf("%+v ran", c.cfg)
		}
	}
}

// BenchmarkPoolTerminals drives 10,000 terminals thinking 200 ms over 100
// sessions of 2 ms (a pool near full) for a 1 s ramp-up and a 3 s window,
// and reports the process's peak RSS over its size before the run per
// terminal, and per transaction the allocations and the client CPU. Run
// it alone: go test -run '^$' -bench PoolTerminals -benchtime 1x.
func BenchmarkPoolTerminals(b *testing.B) {
	const terminals, sessions = 10_000, 100
	for b.Loop() {
		w := newPooled(terminals, 2*time.Millisecond, 200*time.Millisecond)
		runtime.GC()
		before := procStatus(b, "VmRSS")
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		cpu0 := cpuTime(b)
		res, err := Run(context.Background(), w, Config{VUs: terminals, Connections: sessions, Rampup: time.Second,
			Duration: 3 * time.Second, Classify: classify})
		if err != nil {
			b.Fatal(err)
		}
		cpu := cpuTime(b) - cpu0
		runtime.ReadMemStats(&ms1)
		var tx int64
		for i := range w.served {
			tx += w.served[i].Load()
		}
		b.ReportMetric(float64(procStatus(b, "VmHWM")-before)/terminals, "peak-RSS-B/terminal")
		b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(tx), "allocs/tx")
		b.ReportMetric(float64(cpu.Microseconds())/float64(tx), "CPU-µs/tx")
		b.ReportMetric(float64(res.Tx[0].Count)/res.WindowSeconds(), "tx/s")
		b.ReportMetric(float64(res.Pool.Wait.ValueAtQuantile(99))/1000, "wait-p99-ms")
		b.ReportMetric(float64(res.Pool.InUseP95), "sessions-p95")
	}
}

// procStatus reads a size in bytes from /proc/self/status ("VmRSS").
func procStatus(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
