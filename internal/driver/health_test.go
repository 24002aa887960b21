package driver

import (
	"context"
	"sync"
	"testing"
	"time"
)

// faulty is a workload on a pretend server that the test takes down or
// freezes for stretches of the run: down, every call fails as a lost
// connection and reconnecting fails; frozen, a transaction waits until it
// thaws.
type faulty struct {
	mu           sync.Mutex
	down, frozen bool
	thawed       chan struct{}
}

func (f *faulty) TxNames() []string                      { return []string{"only"} }
func (f *faulty) TallyNames() []string                   { return nil }
func (f *faulty) NewVU(context.Context, int) (VU, error) { return &faultyVU{f}, nil }

// at sets the server's state after d: down or up, frozen or thawed.
func (f *faulty) at(d time.Duration, down, frozen bool) {
	time.AfterFunc(d, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.down = down
		if frozen && !f.frozen {
			f.thawed = make(chan struct{})
		}
		if !frozen && f.frozen {
			close(f.thawed)
		}
		f.frozen = frozen
	})
}

func (f *faulty) state() (down bool, thawed chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		thawed = f.thawed
	}
	return f.down, thawed
}

type faultyVU struct{ f *faulty }

func (v *faultyVU) Next() int { return 0 }
func (v *faultyVU) Run(ctx context.Context, _ int, _ Tally) error {
	down, thawed := v.f.state()
	if thawed != nil {
		// As a database driver does, a cancelled call gives up on a
		// server that answers nothing.
		select {
		case <-thawed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if down {
		return errGone
	}
	time.Sleep(2 * time.Millisecond)
	return nil
}
func (v *faultyVU) Reconnect(context.Context) error {
	if down, _ := v.f.state(); down {
		return errGone
	}
	return nil
}
func (v *faultyVU) Close() error { return nil }

// TestRunGivesUpALostServer: a server that goes away 1 s into the window
// and stays away ends the run LostAfter later, not interrupted, with the
// outage recorded, no end edge read, and rates over the second it was up.
func TestRunGivesUpALostServer(t *testing.T) {
	f := &faulty{}
	f.at(1500*time.Millisecond, true, false)
	var edges []bool
	started := time.Now()
	res, err := Run(context.Background(), f, Config{VUs: 2, Rampup: 500 * time.Millisecond, Duration: time.Minute,
		Classify: classify, LostAfter: 1500 * time.Millisecond, WindowEdge: func(_ context.Context, start bool) error { edges = append(edges, start); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 10*time.Second {
		t.Errorf("the run took %s, want it ended soon after the loss", took)
	}
	if !res.ServerLost || res.Interrupted || len(res.Outages) != 1 {
		t.Fatalf("lost %v, interrupted %v, outages %+v; want one outage that lost the server", res.ServerLost, res.Interrupted, res.Outages)
	}
	o := res.Outages[0]
	if o.At < 1.4 || o.At > 1.7 || o.Seconds < 1.5 || o.Seconds > 2.6 {
		t.Errorf("outage %+v, want from 1.5 s for about 1.5 s (checked each second)", o)
	}
	if len(edges) != 1 || !edges[0] {
		t.Errorf("window edges %v, want only the start: there is no server to read at the end", edges)
	}
	if w := res.WindowSeconds(); w < 0.9 || w > 1.2 {
		t.Errorf("window %.2f s, want the second the server was up", w)
	}
	if res.Tx[0].Count == 0 || res.ErrorClasses["connection_lost"] == 0 {
		t.Errorf("count %d, errors %v; want completions before the loss and lost connections", res.Tx[0].Count, res.ErrorClasses)
	}
}

// TestRunRidesOutAShortOutage: a server away for a second and back is an
// outage in the record, and the run carries on to its end.
func TestRunRidesOutAShortOutage(t *testing.T) {
	f := &faulty{}
	f.at(time.Second, true, false)
	f.at(2*time.Second, false, false)
	var edges []bool
	res, err := Run(context.Background(), f, Config{VUs: 2, Duration: 3 * time.Second, Classify: classify,
		LostAfter: 5 * time.Second, WindowEdge: func(_ context.Context, start bool) error { edges = append(edges, start); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerLost || len(res.Outages) != 1 || len(edges) != 2 {
		t.Fatalf("lost %v, outages %+v, edges %v; want one outage, regained, and both edges", res.ServerLost, res.Outages, edges)
	}
	if o := res.Outages[0]; o.At < 0.9 || o.At > 1.2 || o.Seconds < 0.8 || o.Seconds > 1.6 {
		t.Errorf("outage %+v, want from 1 s for about 1 s", o)
	}
	if w := res.WindowSeconds(); w < 2.9 {
		t.Errorf("window %.2f s, want all of it: the server came back", w)
	}
}

// TestRunNamesAStall: a server that answers nothing for 2.5 s while the
// VUs wait is a stall of that length; the seconds around it carry
// latency percentiles, and the one it ends in shows the wait.
func TestRunNamesAStall(t *testing.T) {
	f := &faulty{}
	f.at(time.Second, false, true)
	f.at(3500*time.Millisecond, false, false)
	res, err := Run(context.Background(), f, Config{VUs: 2, Duration: 5 * time.Second, Classify: classify, StallAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stalls) != 1 || len(res.Outages) != 0 {
		t.Fatalf("stalls %+v, outages %+v; want one stall and no outage", res.Stalls, res.Outages)
	}
	if s := res.Stalls[0]; s.At < 0.9 || s.At > 1.1 || s.Seconds < 2.3 || s.Seconds > 2.7 {
		t.Errorf("stall %+v, want from 1 s for 2.5 s", s)
	}
	var slowest float64
	for _, p := range res.Series {
		if p.Latency == nil {
			continue
		}
		if l := p.Latency; l.P50 > l.P95 || l.P95 > l.P99 || l.P99 > l.Max {
			t.Errorf("at %.0f s: %+v, want p50 <= p95 <= p99 <= max", p.T, *l)
		}
		slowest = max(slowest, p.Latency.Max)
	}
	if first := res.Series[0].Latency; first == nil || first.P99 > 100 {
		t.Errorf("first second's latency %+v, want a few ms", first)
	}
	if slowest < 2000 {
		t.Errorf("slowest transaction of a second %.0f ms, want the 2.5 s the stall held one", slowest)
	}
}

// TestRunNoStallWhenIdle: virtual users that think between transactions
// leave seconds without a completion, and none of that is a stall.
func TestRunNoStallWhenIdle(t *testing.T) {
	// A transaction of 500 ms after each think of 1.2 s: the checks, once
	// a second, see the VU in one (at about 3 s and 5 s) more than a
	// second after the last ended, but it began it a moment ago.
	res, err := Run(context.Background(), &counting{counters: 1, wait: 1200 * time.Millisecond, busy: 500 * time.Millisecond},
		Config{VUs: 1, Duration: 5 * time.Second, StallAfter: time.Second, Classify: classify})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stalls) != 0 {
		t.Errorf("stalls %+v while the only VU was thinking, or had just begun a transaction, want none", res.Stalls)
	}
}

// TestRunWaitsForAServerAtTheEnd: a window that closes while the server
// is restarting waits for it, within LostAfter, before reading its end
// edge: the server came back, so the run did not lose it.
func TestRunWaitsForAServerAtTheEnd(t *testing.T) {
	f := &faulty{}
	f.at(time.Second, true, false)
	f.at(2600*time.Millisecond, false, false)
	var edges []bool
	res, err := Run(context.Background(), f, Config{VUs: 2, Duration: 2 * time.Second, Classify: classify,
		LostAfter: 5 * time.Second, WindowEdge: func(_ context.Context, start bool) error { edges = append(edges, start); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerLost || len(edges) != 2 || len(res.Outages) != 1 {
		t.Fatalf("lost %v, edges %v, outages %+v; want the server waited for, both edges read and one outage", res.ServerLost, edges, res.Outages)
	}
	if o := res.Outages[0]; o.Seconds < 1.5 || o.Seconds > 2.2 {
		t.Errorf("outage %+v, want about 1.6 s: the VUs retry at once when the window closes", o)
	}
}

// TestRunGivesUpASilentServer: a server that stops answering 1 s into the
// window (frozen, or behind a half-open connection: calls neither fail nor
// end) is a stall, and once nothing has ended for LostAfter, a server lost:
// the run ends there, not when the server wakes, marked silent, its rates
// over the second it answered, and the VUs' calls in hand cancelled.
func TestRunGivesUpASilentServer(t *testing.T) {
	f := &faulty{}
	f.at(1500*time.Millisecond, false, true)
	defer f.at(0, false, false)
	var edges []bool
	started := time.Now()
	res, err := Run(context.Background(), f, Config{VUs: 2, Rampup: 500 * time.Millisecond, Duration: time.Minute, Classify: classify,
		StallAfter: 500 * time.Millisecond, LostAfter: 2 * time.Second, Probe: silentProbe,
		WindowEdge: func(_ context.Context, start bool) error { edges = append(edges, start); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 8*time.Second {
		t.Errorf("the run took %s, want it ended about LostAfter after the server went silent", took)
	}
	if !res.ServerLost || !res.LostSilent || res.Interrupted || len(res.Outages) != 1 || len(res.Stalls) != 0 {
		t.Fatalf("lost %v (silent %v), interrupted %v, outages %+v, stalls %+v; want one outage, the silence that lost the server",
			res.ServerLost, res.LostSilent, res.Interrupted, res.Outages, res.Stalls)
	}
	if o := res.Outages[0]; o.At < 1.4 || o.At > 1.7 || o.Seconds < 2 || o.Seconds > 3.2 {
		t.Errorf("outage %+v, want from 1.5 s for about LostAfter, 2 s", o)
	}
	if len(edges) != 1 || !edges[0] {
		t.Errorf("window edges %v, want only the start", edges)
	}
	if w := res.WindowSeconds(); w < 0.9 || w > 1.2 {
		t.Errorf("window %.2f s, want the second the server answered", w)
	}
}

// silentProbe is a server that answers nothing.
func silentProbe(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// silentEnd reads a window's edges on a server that answers the start's
// read and nothing after.
func silentEnd(ctx context.Context, start bool) error {
	if start {
		return nil
	}
	return silentProbe(ctx)
}

// TestRunStallWhileTheServerAnswers: virtual users that wait on something
// inside a server that still answers the run's probe (locks held
// elsewhere, a statement that does not end) make a stall, however long,
// not a server lost.
func TestRunStallWhileTheServerAnswers(t *testing.T) {
	f := &faulty{}
	f.at(time.Second, false, true)
	f.at(4500*time.Millisecond, false, false)
	res, err := Run(context.Background(), f, Config{VUs: 2, Duration: 5 * time.Second, Classify: classify,
		StallAfter: 500 * time.Millisecond, LostAfter: 1500 * time.Millisecond, Probe: func(context.Context) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerLost || len(res.Stalls) != 1 {
		t.Fatalf("lost %v, stalls %+v; want one stall, the server kept", res.ServerLost, res.Stalls)
	}
	if s := res.Stalls[0]; !s.Answered || s.At < 0.9 || s.Seconds < 3 {
		t.Errorf("stall %+v, want from 1 s for 3.5 s, the server answering meanwhile", s)
	}
}

// TestRunFixedWorkGivesUpASilentServer: a fixed amount of work records no
// stalls, since its transactions may be long, but a server silent to its
// probe for LostAfter ends it all the same.
func TestRunFixedWorkGivesUpASilentServer(t *testing.T) {
	f := &faulty{}
	f.at(500*time.Millisecond, false, true)
	defer f.at(0, false, false)
	started := time.Now()
	res, err := Run(context.Background(), f, Config{VUs: 2, Each: 1 << 30, Classify: classify, LostAfter: 1500 * time.Millisecond, Probe: silentProbe})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 8*time.Second {
		t.Errorf("the run took %s, want it ended soon after LostAfter of silence", took)
	}
	if !res.ServerLost || !res.LostSilent || len(res.Stalls) != 0 {
		t.Errorf("lost %v (silent %v), stalls %+v; want the server lost, silent, and no stall recorded", res.ServerLost, res.LostSilent, res.Stalls)
	}
}

// TestRunFixedWorkStops: Ctrl-C in a fixed amount of work, whose
// transactions may take minutes (the CPU test's loop), cancels those in
// hand at once: they would count for nothing. Before, the run waited out
// its 30 s grace for them.
func TestRunFixedWorkStops(t *testing.T) {
	f := &faulty{}
	f.at(0, false, true)
	defer f.at(0, false, false)
	ctx, interrupt := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, interrupt)
	started := time.Now()
	res, err := Run(ctx, f, Config{VUs: 2, Each: 1, Classify: classify})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("the run took %s after Ctrl-C at 0.5 s, want it stopped at once", took)
	}
	if !res.Interrupted || res.Tx[0].Count != 0 || res.Tx[0].Errors != 0 {
		t.Errorf("interrupted %v, %d done and %d errors; want the loops in hand counted nowhere", res.Interrupted, res.Tx[0].Count, res.Tx[0].Errors)
	}
}

// TestRunGivesUpAnEdgeNotAnswered: a server that answers the virtual users
// to the window's end but not the read of its end edge is lost once it has
// been silent LostAfter, not waited for.
func TestRunGivesUpAnEdgeNotAnswered(t *testing.T) {
	var edges []bool
	started := time.Now()
	res, err := Run(context.Background(), &faulty{}, Config{VUs: 2, Duration: time.Second, Classify: classify, LostAfter: 1500 * time.Millisecond,
		WindowEdge: func(ctx context.Context, start bool) error {
			edges = append(edges, start)
			return silentEnd(ctx, start)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 6*time.Second {
		t.Errorf("the run took %s, want it ended LostAfter after the end edge was asked", took)
	}
	if !res.ServerLost || !res.LostSilent || len(edges) != 2 {
		t.Fatalf("lost %v (silent %v), edges %v; want both edges tried and the server lost, silent", res.ServerLost, res.LostSilent, edges)
	}
	if o := res.Outages[0]; o.At < 0.9 || o.Seconds < 1.4 || o.Seconds > 2.5 {
		t.Errorf("outage %+v, want from the window's end for LostAfter", o)
	}
}

// TestRunWindowClosesLate: transactions in hand at the window's end hold
// its edge no longer than StallAfter; the window's end is then late by
// that much, with the VUs still in one counted, and its length is the
// true one.
func TestRunWindowClosesLate(t *testing.T) {
	f := &faulty{}
	f.at(1800*time.Millisecond, false, true)
	f.at(3500*time.Millisecond, false, false)
	res, err := Run(context.Background(), f, Config{VUs: 2, Duration: 2 * time.Second, Classify: classify,
		StallAfter: time.Second, LostAfter: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerLost || res.Stuck != 2 || res.Late < 900*time.Millisecond || res.Late > 1500*time.Millisecond {
		t.Fatalf("lost %v, late %s with %d VUs stuck; want the edge held StallAfter, 1 s, for both VUs", res.ServerLost, res.Late, res.Stuck)
	}
	if w := res.WindowSeconds(); w < 2.9 || w > 3.5 {
		t.Errorf("window %.2f s, want its true length: 2 s and the 1 s its edge waited", w)
	}
}

// TestRunQuit: after an interrupt, a server that answers nothing would
// hold the run for LostAfter; Quit, the second interrupt, ends it at once
// with what it has.
func TestRunQuit(t *testing.T) {
	f := &faulty{}
	f.at(500*time.Millisecond, false, true)
	defer f.at(0, false, false)
	ctx, interrupt := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, interrupt)
	quit := make(chan struct{})
	time.AfterFunc(2*time.Second, func() { close(quit) })
	started := time.Now()
	res, err := Run(ctx, f, Config{VUs: 2, Duration: time.Minute, Classify: classify, LostAfter: time.Minute, Quit: quit,
		WindowEdge: silentEnd})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("the run took %s after Quit at 2 s, want it ended at once", took)
	}
	if !res.Interrupted || res.ServerLost || res.WindowStart.IsZero() {
		t.Errorf("interrupted %v, lost %v; want the run kept, interrupted, the server not judged lost", res.Interrupted, res.ServerLost)
	}
}

// BenchmarkRecordSecond is what each completed transaction costs the VU
// for the per-second latencies: one record into its own histogram, and,
// once a second, the hand-over (run with -benchtime to span seconds).
func BenchmarkRecordSecond(b *testing.B) {
	sh := &shared{started: time.Now()}
	s := newVUState(1, 0)
	for b.Loop() {
		recordSecond(s, sh, time.Now(), 3*time.Millisecond)
	}
}
