package parts

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
)

// Ready says this part's virtual users are open and waits, looking every
// poll, until every part is: the leader then fixes the run's instants,
// and every part returns them on its own clock (local = server − offset).
// A part that finds the run gathering past its deadline fails it, naming
// the parts that did not come; a failed run's reason is every part's
// error, one line. Stopped (ctx cancelled), a part fails the run and says
// so; a database that stops answering holds a part no longer than the
// deadline and giveUp, on its own clock.
func (m *Member) Ready(ctx context.Context) (driver.Schedule, error) {
	qctx, cancel := context.WithDeadline(ctx, m.local(m.deadline).Add(giveUp))
	defer cancel()
	sched, err := m.ready(qctx)
	switch {
	case err == nil:
		return sched, nil
	case ctx.Err() != nil:
		reason := fmt.Sprintf("part %d was stopped (Ctrl-C or SIGTERM) at the barrier", m.o.Part.Index)
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		m.Fail(fctx, reason)
		return driver.Schedule{}, fmt.Errorf("%s: %w", reason, context.Cause(ctx))
	case qctx.Err() != nil:
		return driver.Schedule{}, exitcode.Userf("part %s: the target database did not answer at the barrier by the run's deadline and %s after: %s",
			m.o.Part, giveUp, human.OneLine(err))
	}
	return driver.Schedule{}, err
}

func (m *Member) ready(ctx context.Context) (driver.Schedule, error) {
	now, err := m.now(ctx)
	if err != nil {
		return driver.Schedule{}, err
	}
	_, err = m.s.Exec(ctx, m.q.Get("set_ready"), m.runID, m.o.Part.Index, now, m.clock.Offset.Microseconds(), m.rtt.Microseconds())
	if err != nil {
		return driver.Schedule{}, err
	}
	for {
		r, err := scanRun(m.s.QueryRow(ctx, m.q.Get("read_run"), m.o.Name))
		if err != nil {
			return driver.Schedule{}, err
		}
		if r.id != m.runID {
			return driver.Schedule{}, exitcode.Userf("run %s ended at the barrier: part %d took --part-run %q for a run of its own, %s",
				m.runID, r.leader, m.o.Name, r.id)
		}
		switch r.state {
		case started:
			return m.schedule(r), nil
		case failed:
			return driver.Schedule{}, exitcode.Userf("%s", r.reason)
		}
		again, err := m.look(ctx, r)
		if err != nil {
			return driver.Schedule{}, err
		}
		if again {
			continue
		}
		select {
		case <-ctx.Done():
			return driver.Schedule{}, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// look is a part's turn at the gathering run r: the leader starts it once
// every part is ready, and any part fails it past its deadline. again
// says the row changed, or may have.
func (m *Member) look(ctx context.Context, r run) (again bool, err error) {
	now, err := m.now(ctx)
	if err != nil || !m.leader && now <= r.deadline {
		return false, err
	}
	ms, err := m.members(ctx, r.id)
	if err != nil {
		return false, err
	}
	ready := 0
	for _, o := range ms {
		if o.ready > 0 {
			ready++
		}
	}
	switch {
	case m.leader && ready == r.parts:
		return true, m.start(ctx, r, now, ms)
	case now > r.deadline:
		_, err := m.s.Exec(ctx, m.q.Get("fail_run"), m.o.Name, r.id, timeoutReason(r, ms))
		return true, err
	}
	return false, nil
}

// start fixes the run's instants, from now: the start a lead ahead, long
// enough for every part to read it (2 s, and 4 round trips of the
// slowest part's); the window opens a ramp-up later, and closes a hold
// and the duration after that. The hold, still at each edge, is 4 times
// the largest uncertainty of a part's clock, and at least minHold.
func (m *Member) start(ctx context.Context, r run, now int64, ms []member) error {
	var rtt int64
	for _, o := range ms {
		rtt = max(rtt, o.rtt)
	}
	start := now + baseLead.Microseconds() + 4*rtt
	open := start + m.o.Rampup.Microseconds()
	hold := max(minHold.Microseconds(), 4*(rtt/2))
	closes := open + hold + m.o.Duration.Microseconds()
	_, err := m.s.Exec(ctx, m.q.Get("start_run"), m.o.Name, r.id, start, open, closes, hold)
	return err
}

// schedule is r's instants on this part's clock.
func (m *Member) schedule(r run) driver.Schedule {
	return driver.Schedule{Start: m.local(r.start), Open: m.local(r.open), Close: m.local(r.closes),
		Hold: time.Duration(r.hold) * time.Microsecond}
}

// local is a server instant (µs) on this part's clock.
func (m *Member) local(us int64) time.Time {
	return time.UnixMicro(us).Add(-m.clock.Offset)
}

// timeoutReason says which parts a run that timed out lacked: "part 3 of
// 3 did not arrive within --part-timeout 2m0s (parts 1, 2 ready)".
func timeoutReason(r run, ms []member) string {
	joined := map[int]bool{}
	var ready, waiting, absent []int
	for _, o := range ms {
		joined[o.part] = true
		if o.ready > 0 {
			ready = append(ready, o.part)
		} else {
			waiting = append(waiting, o.part)
		}
	}
	for i := 1; i <= r.parts; i++ {
		if !joined[i] {
			absent = append(absent, i)
		}
	}
	of := fmt.Sprintf(" of %d", r.parts)
	var says []string
	if len(absent) > 0 {
		says = append(says, partList(absent)+of+" did not arrive")
		of = ""
	}
	if len(waiting) > 0 {
		verb := " were"
		if len(waiting) == 1 {
			verb = " was"
		}
		says = append(says, partList(waiting)+of+verb+" not ready")
	}
	if len(says) == 0 {
		says = append(says, fmt.Sprintf("every part was ready, but part %d, which leads, did not start the run", r.leader))
	}
	timeout := time.Duration(r.deadline-r.created) * time.Microsecond
	got := "none ready"
	if len(ready) > 0 {
		got = partList(ready) + " ready"
	}
	return fmt.Sprintf("%s within --part-timeout %s (%s)", strings.Join(says, " and "), timeout, got)
}

// partList is "part 3", or "parts 1, 2".
func partList(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	if len(ps) == 1 {
		return "part " + s[0]
	}
	return "parts " + strings.Join(s, ", ")
}

// Fail fails the run while it gathers, for reason, which every part
// waiting at the barrier then returns; a reason already there stays.
func (m *Member) Fail(ctx context.Context, reason string) {
	if m.runID == "" {
		return
	}
	fail := func() error {
		_, err := m.s.Exec(ctx, m.q.Get("fail_run"), m.o.Name, m.runID, reason)
		return err
	}
	if m.with(ctx, fail) == nil || ctx.Err() != nil {
		return
	}
	// A statement cancelled as the part was stopped may take the
	// session's connection with it (MariaDB's driver closes it, and the
	// run stayed gathering): once more, on a session of its own.
	_ = m.Close()
	_ = m.with(ctx, fail)
}

// Remeasure measures the clock's offset again, after the run, to show
// how far the clocks drifted over it; its session is closed by then, so
// it opens one for the while.
func (m *Member) Remeasure(ctx context.Context) (Clock, error) {
	var c Clock
	err := m.with(ctx, func() (err error) {
		c, _, err = measure(ctx, time.Now, m.now)
		return err
	})
	return c, err
}

// with runs f with the barrier session open, opening one for f alone
// if Close has closed it.
func (m *Member) with(ctx context.Context, f func() error) error {
	if m.s != nil {
		return f()
	}
	s, err := m.t.Session(ctx)
	if err != nil {
		return err
	}
	m.s = s
	return errors.Join(f(), m.Close())
}

// Close publishes what the barrier session did to the database's
// counters (where its sessions are Flushers) and closes it: call it
// before the start instant, so that none of the barrier's transactions
// counts inside the window.
func (m *Member) Close() error {
	if m.s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	if f, ok := m.s.(dbtarget.Flusher); ok {
		err = f.Flush(ctx)
	}
	err = errors.Join(err, m.s.Close())
	m.s = nil
	return err
}
