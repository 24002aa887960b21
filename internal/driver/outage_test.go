package driver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// downable is a workload whose "server" an action can take down: a
// transaction in flight as it goes is in doubt (its commit sent, never
// answered), and no connection opens again until it is back. Its VUs
// can also be a pool's sessions, with terminals that never think.
type downable struct {
	down       atomic.Bool
	runs       atomic.Int64
	reconnects atomic.Int64
}

func (w *downable) TxNames() []string    { return []string{"a"} }
func (w *downable) TallyNames() []string { return nil }
func (w *downable) NewVU(context.Context, int) (VU, error) {
	return &downableVU{w: w}, nil
}

type downableVU struct{ w *downable }

func (v *downableVU) Next() int { return 0 }
func (v *downableVU) Run(context.Context, int, Tally) error {
	v.w.runs.Add(1)
	time.Sleep(2 * time.Millisecond)
	if v.w.down.Load() {
		return WrapInDoubt(errGone)
	}
	return nil
}
func (v *downableVU) Reconnect(context.Context) error {
	v.w.reconnects.Add(1)
	if v.w.down.Load() {
		return errGone
	}
	return nil
}
func (v *downableVU) Close() error { return nil }

// pooledDownable is downable as a pool: terminals that never think, and
// its VUs lent to them as sessions.
type pooledDownable struct{ *downable }

func (p pooledDownable) NewTerminal(int) Terminal { return &pooledTerm{} }
func (p pooledDownable) NewSession(context.Context, int) (Session, error) {
	return sessionOf{&downableVU{w: p.downable}}, nil
}

type sessionOf struct{ *downableVU }

func (s sessionOf) Run(ctx context.Context, _ Terminal, tx int, t Tally) error {
	return s.downableVU.Run(ctx, tx, t)
}

// TestActionOutage: an action that takes the server down for a second
// costs every holder (VU, or pooled session) at least that, overall and
// each alone, from its last completion before to its first after, and not
// much more: while it is watched, reconnects do not back off. The
// transactions in flight are in doubt, counted apart from completions and
// errors. An action that stops nothing costs a few milliseconds at most.
func TestActionOutage(t *testing.T) {
	const down = time.Second
	for _, c := range []struct {
		name        string
		connections int
	}{{"per VU", 0}, {"pooled", 2}} {
		t.Run(c.name, func(t *testing.T) {
			w := &downable{}
			var wl Workload = w
			if c.connections > 0 {
				wl = pooledDownable{w}
			}
			watched := &watcher{}
			res, err := Run(context.Background(), wl, Config{
				VUs: 3, Connections: c.connections, Rampup: 100 * time.Millisecond, Duration: 2200 * time.Millisecond,
				Classify: classifyIs, Observer: watched,
				Actions: []Action{
					{At: 300 * time.Millisecond, Outage: true, Do: func(_ context.Context, note func(string)) error {
						w.down.Store(true)
						note("server down")
						time.Sleep(down)
						w.down.Store(false)
						note("server up")
						return nil
					}},
					{At: 1800 * time.Millisecond, Outage: true, Do: func(context.Context, func(string)) error {
						time.Sleep(200 * time.Millisecond)
						return nil
					}},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ActionOutages) != 2 {
				t.Fatalf("%d action outages, want 2", len(res.ActionOutages))
			}
			holders := 3
			if c.connections > 0 {
				holders = c.connections
			}
			o := res.ActionOutages[0]
			if o.What != "server down" || o.Sessions != (c.connections > 0) || len(o.Holders) != holders {
				t.Errorf("outage %+v, want the action's first note, %d holders", o, holders)
			}
			if a := o.Action; a.At < 0.3 || a.At > 0.35 || a.Seconds < 1 || a.Seconds > 1.05 {
				t.Errorf("the action's span %+v, want from 0.3 s for 1 s", a)
			}
			// Backing off (0.1, 0.2, 0.4, 0.8 s), they would be back 1.5 s
			// after the server went; trying every 0.1 s, within 1.1 s.
			covers := func(what string, s Span) {
				if s.At > o.Action.At || s.At+s.Seconds < o.Action.At+o.Action.Seconds || s.Seconds > 1.25 {
					t.Errorf("%s %+v, want it to cover the action's %+v", what, s, o.Action)
				}
			}
			covers("overall", o.Longest)
			for i, h := range o.Holders {
				covers("holder", h.Span)
				if h.NotBack || h.Seconds < o.Longest.Seconds-0.001 {
					t.Errorf("holder %d %+v: want it back, and out at least as long as the overall %.3f s", i, h, o.Longest.Seconds)
				}
			}
			if o.ToEnd {
				t.Error("the outage is said to run to the window's end")
			}
			quiet := res.ActionOutages[1]
			if quiet.Longest.Seconds > 0.1 || quiet.ToEnd {
				t.Errorf("an action that stopped nothing cost %+v", quiet.Longest)
			}
			for _, h := range quiet.Holders {
				if h.Seconds > 0.1 || h.NotBack {
					t.Errorf("an action that stopped nothing cost a holder %+v", h)
				}
			}

			tx := res.Tx[0]
			if tx.InDoubt < 1 || tx.InDoubt > int64(holders) || tx.Errors != 0 || tx.Retries != 0 {
				t.Errorf("in doubt %d, errors %d, retries %d; want the commits in flight in doubt, one a holder at most, and nothing else", tx.InDoubt, tx.Errors, tx.Retries)
			}
			if tx.Hist.TotalCount() != tx.Count || res.ErrorClasses != nil {
				t.Errorf("histogram %d of %d completions, errors by class %v; want in doubt in neither", tx.Hist.TotalCount(), tx.Count, res.ErrorClasses)
			}
			var perSecond int64
			for _, p := range res.Series {
				perSecond += p.InDoubt
			}
			if perSecond != tx.InDoubt || watched.outcomes[0][InDoubt] != tx.InDoubt {
				t.Errorf("in doubt: %d in the series, %d seen by the observer, %d counted", perSecond, watched.outcomes[0][InDoubt], tx.InDoubt)
			}
			if w.reconnects.Load() < int64(holders) {
				t.Errorf("%d reconnects, want every holder's connection reopened after its commit in doubt", w.reconnects.Load())
			}
		})
	}
}

// TestActionOutageNotBack: a server that goes for good leaves every VU
// out to the window's end, said so, as the stretch overall; so does one
// that goes a little after the action starts, transactions completing
// meanwhile (a kill that in-flight commits beat).
func TestActionOutageNotBack(t *testing.T) {
	for _, late := range []time.Duration{0, 50 * time.Millisecond} {
		t.Run(late.String(), func(t *testing.T) {
			w := &downable{}
			res, err := Run(context.Background(), w, Config{
				VUs: 2, Duration: time.Second, Classify: classifyIs, LostAfter: 500 * time.Millisecond,
				Actions: []Action{{At: 200 * time.Millisecond, Outage: true, Do: func(context.Context, func(string)) error {
					time.Sleep(late)
					w.down.Store(true)
					return nil
				}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ActionOutages) != 1 {
				t.Fatalf("%d action outages, want 1", len(res.ActionOutages))
			}
			o := res.ActionOutages[0]
			end := res.WindowEnd.Sub(res.Started).Seconds()
			from := 0.2 + late.Seconds()
			if !o.ToEnd || o.Longest.At > from+0.05 || o.Longest.At+o.Longest.Seconds < end-0.01 {
				t.Errorf("overall %+v (to the end %v), want from %.2f s to the window's end, %.2f s", o.Longest, o.ToEnd, from, end)
			}
			for i, h := range o.Holders {
				if !h.NotBack || h.At+h.Seconds < end-0.01 {
					t.Errorf("holder %d %+v, want it not back, out to the window's end", i, h)
				}
			}
		})
	}
}
