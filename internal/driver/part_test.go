package driver

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/latency"
)

// TestPartIDs: the parts of a run split n ways run every id of the whole
// run once, their shares differ by one at most, and each id starts at the
// moment of the ramp-up it has in the whole run.
func TestPartIDs(t *testing.T) {
	const rampup = 10 * time.Second
	for total := 1; total <= 23; total++ {
		whole := Part{}.IDs(total)
		if len(whole) != total || (Part{}).Share(total) != total || (Part{}).String() != "" {
			t.Fatalf("the whole run of %d: ids %v", total, whole)
		}
		for n := 1; n <= min(total, 6); n++ {
			seen := make([]int, total)
			var shares []int
			var delays []time.Duration
			for i := 1; i <= n; i++ {
				p := Part{Index: i, Of: n}
				ids := p.IDs(total)
				if p.Share(total) != len(ids) || !slices.IsSorted(ids) {
					t.Fatalf("part %s of %d: share %d, ids %v", p, total, p.Share(total), ids)
				}
				if err := p.check(total, "virtual users"); err != nil {
					t.Fatalf("part %s of %d refused: %v", p, total, err)
				}
				shares = append(shares, len(ids))
				for _, id := range ids {
					seen[id]++
					delays = append(delays, rampDelay(rampup, id, total))
				}
			}
			for id, k := range seen {
				if k != 1 {
					t.Fatalf("%d ways of %d: id %d run %d times", n, total, id, k)
				}
			}
			if slices.Max(shares)-slices.Min(shares) > 1 {
				t.Errorf("%d ways of %d: shares %v", n, total, shares)
			}
			slices.Sort(delays)
			for id, d := range delays {
				if want := rampup * time.Duration(id) / time.Duration(max(total, 1)); total > 1 && d != want {
					t.Fatalf("%d ways of %d: the %dth start at %s, the whole run's at %s", n, total, id, d, want)
				}
			}
		}
	}
	if s := (Part{Index: 2, Of: 3}).String(); s != "2/3" {
		t.Errorf("String %q", s)
	}
	for _, p := range []Part{{Index: 0, Of: 3}, {Index: 4, Of: 3}, {Index: 3, Of: 3}} {
		if p.check(2, "virtual users") == nil {
			t.Errorf("part %+v of 2 virtual users accepted", p)
		}
	}
}

// idWorkload records the ids the driver opens, when each virtual user
// (or terminal) first ran, how many transactions run now, and how many
// of its VUs and sessions were closed.
type idWorkload struct {
	mu            sync.Mutex
	vus, sessions []int
	terminals     []int
	first         map[int]time.Time
	inRun, closed atomic.Int32
}

func (w *idWorkload) TxNames() []string    { return []string{"a"} }
func (w *idWorkload) TallyNames() []string { return nil }
func (w *idWorkload) NewVU(_ context.Context, id int) (VU, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.vus = append(w.vus, id)
	return &idVU{w: w, id: id}, nil
}
func (w *idWorkload) NewTerminal(id int) Terminal {
	w.terminals = append(w.terminals, id)
	return &pooledTerm{id: id, think: 5 * time.Millisecond}
}
func (w *idWorkload) NewSession(_ context.Context, id int) (Session, error) {
	w.sessions = append(w.sessions, id)
	return idSession{w}, nil
}

// run is a transaction of id's.
func (w *idWorkload) run(id int) {
	w.inRun.Add(1)
	defer w.inRun.Add(-1)
	w.mu.Lock()
	if _, ok := w.first[id]; !ok {
		w.first[id] = time.Now()
	}
	w.mu.Unlock()
	time.Sleep(time.Millisecond)
}

type idVU struct {
	w  *idWorkload
	id int
}

func (v *idVU) Next() int                             { return 0 }
func (v *idVU) Run(context.Context, int, Tally) error { v.w.run(v.id); return nil }
func (v *idVU) Reconnect(context.Context) error       { return nil }
func (v *idVU) Close() error                          { v.w.closed.Add(1); return nil }

type idSession struct{ w *idWorkload }

func (s idSession) Run(_ context.Context, term Terminal, _ int, _ Tally) error {
	s.w.run(term.(*pooledTerm).id)
	return nil
}
func (s idSession) Reconnect(context.Context) error { return nil }
func (s idSession) Close() error                    { s.w.closed.Add(1); return nil }

// TestPartRun: part 2 of 3 of a run of 8 virtual users opens only ids 1,
// 4 and 7 (and, pooled over 5 sessions, sessions 1 and 4), starts none
// before its moment of the whole run's ramp-up, and counts only its own
// in its progress.
func TestPartRun(t *testing.T) {
	const rampup = 800 * time.Millisecond
	for _, conns := range []int{0, 5} {
		w := &idWorkload{first: map[int]time.Time{}}
		var mu sync.Mutex
		most := 0
		res, err := Run(context.Background(), w, Config{VUs: 8, Connections: conns, Part: Part{Index: 2, Of: 3},
			Rampup: rampup, Duration: 1200 * time.Millisecond, Classify: classify,
			Progress: func(tk Tick) { mu.Lock(); most = max(most, tk.VUs); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		opened, want := w.vus, []int{1, 4, 7}
		if conns > 0 {
			opened = w.terminals
			if !slices.Equal(w.sessions, []int{1, 4}) || res.Pool.Sessions != 2 || res.Pool.Terminals != 3 {
				t.Errorf("pooled part: sessions %v, pool %+v; want sessions [1 4] for 3 terminals", w.sessions, res.Pool)
			}
		}
		if !slices.Equal(opened, want) || len(w.first) != len(want) {
			t.Fatalf("connections %d: opened %v, ran %v; want %v", conns, opened, w.first, want)
		}
		for id, at := range w.first {
			if d := at.Sub(res.Started); d < rampDelay(rampup, id, 8) {
				t.Errorf("connections %d: id %d ran %s into the run, before its start at %s", conns, id, d, rampDelay(rampup, id, 8))
			}
		}
		if most != len(want) {
			t.Errorf("connections %d: progress counted at most %d running, want the part's %d", conns, most, len(want))
		}
		checkPartSeries(t, res, conns > 0)
	}
}

// TestScheduleEdges: a run told its instants (Meet, called once every VU
// or session is open) starts its clock at Start, reads the start edge
// halfway through the hold after Open while no transaction runs, opens
// its window at the hold's end, closes it at Close and reads that edge
// halfway through the hold after it. Meet's error closes everything, and
// Ctrl-C before Start ends the run in its ramp-up. The machine is shared:
// each instant is asserted inside [instant, instant+slack], and the order.
func TestScheduleEdges(t *testing.T) {
	const hold, slack = 200 * time.Millisecond, 150 * time.Millisecond
	for _, conns := range []int{0, 2} {
		w := &idWorkload{first: map[int]time.Time{}}
		var sched Schedule
		var met, opened int
		var edges []time.Time
		var busy []int32
		res, err := Run(context.Background(), w, Config{VUs: 8, Connections: conns, Part: Part{Index: 1, Of: 2},
			Rampup: 400 * time.Millisecond, Duration: time.Hour, Classify: classify,
			Meet: func(context.Context) (Schedule, error) {
				met++
				opened = len(w.vus) + len(w.sessions)
				start := time.Now().Add(300 * time.Millisecond)
				sched = Schedule{Start: start, Open: start.Add(400 * time.Millisecond), Hold: hold}
				sched.Close = sched.Open.Add(hold + 800*time.Millisecond)
				return sched, nil
			},
			WindowEdge: func(context.Context, bool) error {
				edges = append(edges, time.Now())
				busy = append(busy, w.inRun.Load())
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]int{0: 4, 2: 1}[conns]; met != 1 || opened != want {
			t.Fatalf("connections %d: Meet called %d times, with %d open; want once, with %d", conns, met, opened, want)
		}
		if !res.Started.Equal(sched.Start) || len(edges) != 2 || res.Interrupted {
			t.Fatalf("connections %d: started %s (schedule %s), edges %v, interrupted %v", conns, res.Started, sched.Start, edges, res.Interrupted)
		}
		within := func(what string, at, want time.Time) {
			if d := at.Sub(want); d < 0 || d > slack {
				t.Errorf("connections %d: %s %s after its instant, want within [0, %s]", conns, what, d, slack)
			}
		}
		within("the start edge read", edges[0], sched.Open.Add(hold/2))
		within("the window opened", res.WindowStart, sched.Open.Add(hold))
		within("the window closed", res.WindowEnd, sched.Close)
		within("the end edge read", edges[1], sched.Close.Add(hold/2))
		if busy[0] != 0 || busy[1] != 0 {
			t.Errorf("connections %d: %v transactions running as the edges were read, want none", conns, busy)
		}
		for id, at := range w.first {
			if d := at.Sub(sched.Start); d < rampDelay(400*time.Millisecond, id, 8) {
				t.Errorf("connections %d: id %d ran %s after Start, before its moment", conns, id, d)
			}
		}
		if len(res.Series) == 0 || res.Series[0].T < 0.9 || res.Series[0].T > 1.25 {
			t.Errorf("connections %d: series %v, want its first point a second after Start", conns, res.Series)
		}
	}
	w := &idWorkload{first: map[int]time.Time{}}
	refused := errors.New("part 3 did not come")
	_, err := Run(context.Background(), w, Config{VUs: 4, Connections: 2, Part: Part{Index: 2, Of: 2}, Duration: time.Second,
		Classify: classify, Meet: func(context.Context) (Schedule, error) { return Schedule{}, refused }})
	if err != refused || w.closed.Load() != 1 {
		t.Errorf("Meet's error: %v, %d of 1 sessions closed", err, w.closed.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := Run(ctx, w, Config{VUs: 2, Rampup: time.Second, Duration: time.Second, Classify: classify,
		Meet: func(context.Context) (Schedule, error) {
			start := time.Now().Add(time.Hour)
			return Schedule{Start: start, Open: start, Close: start.Add(time.Second)}, nil
		}})
	if err != nil || !res.Interrupted || !res.WindowStart.IsZero() {
		t.Errorf("Ctrl-C before Start: err %v, %+v; want an interrupted run without a window", err, res)
	}
}

// checkPartSeries: every point of a part's series carries the second's
// histograms its percentiles were read from, and some hold transactions.
func checkPartSeries(t *testing.T, res *Result, pooled bool) {
	t.Helper()
	var n int64
	for k, p := range res.Series {
		if !reflect.DeepEqual(percentiles(p.Hist), p.Latency) {
			t.Errorf("point %d: latency %+v from a histogram of %+v", k, p.Latency, percentiles(p.Hist))
		}
		if pooled && !reflect.DeepEqual(percentiles(p.WaitHist), res.Pool.Waits[k]) {
			t.Errorf("point %d: waits %+v from a histogram of %+v", k, res.Pool.Waits[k], percentiles(p.WaitHist))
		}
		if !pooled && p.WaitHist != nil {
			t.Errorf("point %d: a wait histogram in a run without a pool", k)
		}
		if p.Hist != nil {
			n += p.Hist.TotalCount()
		}
	}
	if n == 0 {
		t.Error("no point of the part's series has a histogram")
	}
}

// TestSecondsKept: a part's points get their seconds' histograms, packed
// ones unpacked whole; a whole run's get none.
func TestSecondsKept(t *testing.T) {
	var s seconds
	for i := range 20 {
		h := latency.NewSecondHistogram()
		for range i + 1 {
			latency.Record(h, time.Duration(i+1)*time.Millisecond)
		}
		s.add(i, h)
	}
	series := make([]Point, 21)
	for k := range series {
		series[k].T = float64(k + 1)
	}
	s.attach(series, true)
	for k, p := range series[:20] {
		if p.Hist == nil || p.Hist.TotalCount() != int64(k+1) || p.Latency == nil {
			t.Fatalf("point %d: histogram %v, latency %v; want %d transactions", k, p.Hist, p.Latency, k+1)
		}
	}
	if series[20].Hist != nil || series[20].Latency != nil {
		t.Error("a second with nothing recorded has a histogram")
	}
	whole := make([]Point, 20)
	for k := range whole {
		whole[k].T = float64(k + 1)
	}
	s.attach(whole, false)
	for k, p := range whole {
		if p.Hist != nil || p.Latency == nil {
			t.Fatalf("a whole run's point %d: histogram %v, latency %v; want percentiles only", k, p.Hist, p.Latency)
		}
	}
}

// A part's share of the largest count a flag takes does not overflow:
// the shares still add up to it.
func TestPartShareLarge(t *testing.T) {
	for _, total := range []int{math.MaxInt, math.MaxInt - 1, 99999999999} {
		sum := 0
		for i := 1; i <= 3; i++ {
			s := Part{Index: i, Of: 3}.Share(total)
			if s <= 0 {
				t.Fatalf("part %d/3 of %d: share %d", i, total, s)
			}
			sum += s
		}
		if sum != total {
			t.Errorf("the shares of %d add up to %d", total, sum)
		}
	}
}
