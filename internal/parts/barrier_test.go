//go:build unix

package parts

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	"github.com/dbrig/dbrig/internal/dbtarget/postgres"
	"github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestBarrierPostgres: the barrier's protocol in a PostgreSQL database.
func TestBarrierPostgres(t *testing.T) {
	testBarrier(t, func(ctx context.Context, t *testing.T) (dbtarget.Target, error) {
		return postgres.Open(ctx, pgtest.NewDB(t))
	})
}

// TestBarrierMariaDB: the same protocol in a MariaDB database, where the
// barrier's SQL differs (INSERT IGNORE, the server's clock).
func TestBarrierMariaDB(t *testing.T) {
	testBarrier(t, func(ctx context.Context, t *testing.T) (dbtarget.Target, error) {
		return mariadb.Open(ctx, mariatest.NewDB(t))
	})
}

// TestPartsRefusedSQLite: an SQLite database holds no barrier, and Join
// says so in one line before it opens anything.
func TestPartsRefusedSQLite(t *testing.T) {
	ctx := context.Background()
	tg, err := sqlite.OpenURL(ctx, sqlite.Prefix+filepath.Join(t.TempDir(), "p.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	for what, err := range map[string]error{
		"Check": Check(tg.Dialect()),
		"Join":  second(Join(ctx, tg, options(1, 2, "r", 1))),
	} {
		wantUserLine(t, what, err, "--part: ", "a sqlite database cannot hold their barrier: it is one host's")
	}
}

func second[T any](_ T, err error) error { return err }

// wantUserLine fails t unless err is a user's error of one line holding
// every one of says.
func wantUserLine(t *testing.T, what string, err error, says ...string) {
	t.Helper()
	var ue *exitcode.UserError
	if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: %v; want a user's error of one line", what, err)
		return
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: %q does not say %q", what, err, s)
		}
	}
}

// options are part i of n of run name, with its own seed; its
// configuration holds the seed, the duration and a nested key.
func options(i, n int, name string, seed uint64) Options {
	return lasting(Options{Part: driver.Part{Index: i, Of: n}, Name: name, Timeout: 30 * time.Second,
		Rampup: time.Second, Seed: seed, Host: fmt.Sprintf("host%d", i)}, 3*time.Second)
}

// lasting is o with duration d, in its configuration too.
func lasting(o Options, d time.Duration) Options {
	o.Duration = d
	o.Config = func(seed uint64) (map[string]any, error) {
		return map[string]any{"seed": seed, "duration": d.String(), "vus": 6,
			"c_run": map[string]any{"c_last": seed % 255}}, nil
	}
	return o
}

func testBarrier(t *testing.T, open func(context.Context, *testing.T) (dbtarget.Target, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tg, err := open(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	b := barrier{ctx: ctx, tg: tg}
	t.Run("meet", b.meet)
	t.Run("duplicate", b.duplicate)
	t.Run("differs", b.differs)
	t.Run("timeout", b.timeout)
	t.Run("stale", b.stale)
	t.Run("stopped", b.stopped)
	t.Run("drop", b.drop)
}

type barrier struct {
	ctx context.Context
	tg  dbtarget.Target
}

func (b barrier) join(t *testing.T, o Options) *Member {
	t.Helper()
	m, err := Join(b.ctx, b.tg, o)
	if err != nil {
		t.Fatalf("part %s joins: %v", o.Part, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// ready has every member ready at once, and returns what each got.
func ready(ctx context.Context, ms ...*Member) ([]driver.Schedule, []error) {
	scheds, errs := make([]driver.Schedule, len(ms)), make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() { scheds[i], errs[i] = m.Ready(ctx) })
	}
	wg.Wait()
	return scheds, errs
}

// meet: three parts join at once: one leads, the others take its seed
// and configuration; once all are ready they get one schedule, the same
// server instants on each part's clock, a ramp-up, a hold and the
// duration apart.
func (b barrier) meet(t *testing.T) {
	const n = 3
	ms := make([]*Member, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ms[i], errs[i] = Join(b.ctx, b.tg, options(i+1, n, "meet", 1<<63+uint64(100+i))) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("part %d joins: %v", i+1, err)
		}
		defer ms[i].Close()
	}
	var leader *Member
	for _, m := range ms {
		if m.Leader() {
			if leader != nil {
				t.Fatal("two leaders")
			}
			leader = m
		}
	}
	if leader == nil {
		t.Fatal("no leader")
	}
	for _, m := range ms {
		if m.RunID() != leader.RunID() || m.seed != leader.o.Seed || m.ConfigSHA256() != leader.ConfigSHA256() {
			t.Errorf("part %s: run %s, seed %d, config %s; the leader's: %s, %d, %s", m.o.Part,
				m.RunID(), m.seed, m.ConfigSHA256(), leader.RunID(), leader.o.Seed, leader.ConfigSHA256())
		}
		if c := m.Clock(); c.Uncertainty <= 0 {
			t.Errorf("part %s: clock %+v, no uncertainty", m.o.Part, c)
		}
	}
	asked := time.Now()
	scheds, errs := ready(b.ctx, ms...)
	for i, s := range scheds {
		if errs[i] != nil {
			t.Fatalf("part %d ready: %v", i+1, errs[i])
		}
		c, c0 := ms[i].Clock(), ms[0].Clock()
		// On the server's clock the instants are one.
		if !s.Start.Add(c.Offset).Equal(scheds[0].Start.Add(c0.Offset)) || !s.Close.Add(c.Offset).Equal(scheds[0].Close.Add(c0.Offset)) {
			t.Errorf("part %d: schedule %+v (offset %v), part 1's %+v (offset %v): not the same server instants", i+1, s, c.Offset, scheds[0], c0.Offset)
		}
		// On the parts' clocks, one host's, they differ by no more than
		// the offsets' uncertainty.
		if d := s.Start.Sub(scheds[0].Start).Abs(); d > c.Uncertainty+c0.Uncertainty {
			t.Errorf("part %d starts %v from part 1, more than the uncertainties %v + %v", i+1, d, c.Uncertainty, c0.Uncertainty)
		}
		if s.Start.Before(asked) || s.Open.Sub(s.Start) != time.Second || s.Hold < minHold || s.Close.Sub(s.Open) != s.Hold+3*time.Second {
			t.Errorf("part %d: schedule %+v: want a start after Ready was called (%v), the ramp-up 1s to the opening, a hold of %v or more, then 3s", i+1, s, asked, minHold)
		}
	}
	for _, m := range ms {
		if err := m.Close(); err != nil {
			t.Errorf("part %s closes: %v", m.o.Part, err)
		}
		if c, err := m.Remeasure(b.ctx); err != nil || c.Uncertainty <= 0 {
			t.Errorf("part %s remeasures after Close: %+v, %v", m.o.Part, c, err)
		}
	}
}

// duplicate: a part whose index is there already fails alone; the run
// goes on and starts with the first.
func (b barrier) duplicate(t *testing.T) {
	first := b.join(t, options(1, 2, "dup", 7))
	_, err := Join(b.ctx, b.tg, options(1, 2, "dup", 8))
	wantUserLine(t, "the second part 1/2", err, "part 1/2 is already here: host host1, pid ", first.RunID())
	second := b.join(t, options(2, 2, "dup", 9))
	if second.Leader() || second.seed != 7 {
		t.Errorf("part 2 leads %v, seed %d: want a follower with the leader's seed 7", second.Leader(), second.seed)
	}
	if _, errs := ready(b.ctx, first, second); errs[0] != nil || errs[1] != nil {
		t.Errorf("the run with the duplicate refused: %v", errs)
	}
}

// differs: a part whose part count or configuration differs fails the
// run, naming what differs, for every part.
func (b barrier) differs(t *testing.T) {
	lead := b.join(t, options(1, 2, "differs", 5))
	_, err := Join(b.ctx, b.tg, lasting(options(2, 2, "differs", 6), 2*time.Second))
	const says = "part 2's duration 2s differs from part 1's 3s: every part must run the same flags and workload settings"
	wantUserLine(t, "part 2 joins", err, says)
	_, errs := ready(b.ctx, lead)
	wantUserLine(t, "the leader's Ready", errs[0], says)

	lead = b.join(t, options(1, 3, "count", 5))
	_, err = Join(b.ctx, b.tg, options(2, 2, "count", 6))
	const count = "part 2's part count 2 differs from part 1's 3"
	wantUserLine(t, "part 2/2 joins 3 parts", err, count)
	_, errs = ready(b.ctx, lead)
	wantUserLine(t, "the leader's Ready", errs[0], count)
}

// timeout: two parts of three, ready; past the deadline each says the
// third did not come.
func (b barrier) timeout(t *testing.T) {
	var ms []*Member
	for i := 1; i <= 2; i++ {
		o := options(i, 3, "timeout", uint64(i))
		o.Timeout = time.Second
		ms = append(ms, b.join(t, o))
	}
	_, errs := ready(b.ctx, ms...)
	for i, err := range errs {
		wantUserLine(t, fmt.Sprintf("part %d's Ready", i+1), err, "part 3 of 3 did not arrive within --part-timeout 1s (parts 1, 2 ready)")
	}
}

// stale: a new leader takes a row whose run failed, gathered past its
// deadline, or started and ended; a run under way turns a newcomer away.
func (b barrier) stale(t *testing.T) {
	// The timeout's run failed.
	m := b.join(t, options(2, 3, "timeout", 11))
	if !m.Leader() || m.seed != 11 {
		t.Errorf("on a failed run's row: leads %v, seed %d; want the new run's leader", m.Leader(), m.seed)
	}
	// Gathering past its deadline.
	o := options(1, 2, "gone", 1)
	o.Timeout = 200 * time.Millisecond
	old := b.join(t, o)
	time.Sleep(300 * time.Millisecond)
	m = b.join(t, options(2, 2, "gone", 2))
	if !m.Leader() || m.RunID() == old.RunID() {
		t.Errorf("past the deadline: leads %v, run %s (the old one %s); want a new run it leads", m.Leader(), m.RunID(), old.RunID())
	}
	_, errs := ready(b.ctx, old)
	wantUserLine(t, "the old run's Ready", errs[0], "run "+old.RunID()+" ended at the barrier: part 2 took --part-run \"gone\"")
	// Started: a newcomer is turned away while it runs, and leads once
	// it has ended (its window closed, held, and the grace passed).
	ms := []*Member{b.join(t, options(1, 2, "ended", 1)), b.join(t, options(2, 2, "ended", 2))}
	if _, errs := ready(b.ctx, ms...); errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	_, err := Join(b.ctx, b.tg, options(3, 3, "ended", 3))
	wantUserLine(t, "a newcomer to a run under way", err, "--part-run \"ended\": run "+ms[0].RunID()+" is under way")
	s, err := b.tg.Session(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Exec(b.ctx, "UPDATE dbrig_part_runs SET close_us = close_us - $1 WHERE name = 'ended'", (time.Minute).Microseconds()); err != nil {
		t.Fatal(err)
	}
	if m := b.join(t, options(1, 2, "ended", 4)); !m.Leader() || m.RunID() == ms[0].RunID() {
		t.Errorf("after the run ended: leads %v, run %s; want a new run it leads", m.Leader(), m.RunID())
	}
	var members int
	if err := s.QueryRow(b.ctx, "SELECT count(*) FROM dbrig_part_members WHERE run_id = $1", ms[0].RunID()).Scan(&members); err != nil || members != 0 {
		t.Errorf("the ended run's members: %d left, %v; want them gone", members, err)
	}
}

// stopped: a part stopped at the barrier fails the run, saying so.
func (b barrier) stopped(t *testing.T) {
	m := b.join(t, options(2, 2, "stopped", 1))
	stop, cancel := context.WithCancel(b.ctx)
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	_, errs := ready(stop, m)
	if !errors.Is(errs[0], context.Canceled) || !strings.Contains(errs[0].Error(), "part 2 was stopped (Ctrl-C or SIGTERM) at the barrier") {
		t.Errorf("stopped: %v", errs[0])
	}
	var state, reason string
	if err := b.row("stopped", &state, &reason); err != nil || state != failed || reason != "part 2 was stopped (Ctrl-C or SIGTERM) at the barrier" {
		t.Errorf("the stopped run's row: %s %q %v; want it failed for that", state, reason, err)
	}
	if m := b.join(t, options(1, 2, "stopped", 2)); !m.Leader() {
		t.Error("on the stopped run's row: not the new run's leader")
	}
}

// drop: Drop keeps the barrier's tables while a run gathers in them, and
// names it; once none does, it drops them, and then finds none to drop.
func (b barrier) drop(t *testing.T) {
	m := b.join(t, options(1, 2, "dropped", 1))
	defer m.Close()
	if live, err := Drop(b.ctx, b.tg); err != nil || live == "" {
		t.Fatalf("Drop while runs gather: live %q, %v; want one named, the tables kept", live, err)
	}
	s, err := b.tg.Session(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q, err := load(b.tg.Dialect())
	if err != nil {
		t.Fatal(err)
	}
	tables := func() int {
		var n int
		if err := s.QueryRow(b.ctx, q.Get("exists")).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if tables() == 0 {
		t.Fatal("Drop dropped the tables of runs gathering in them")
	}
	if _, err := s.Exec(b.ctx, "UPDATE dbrig_part_runs SET state = 'failed'"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if live, err := Drop(b.ctx, b.tg); err != nil || live != "" {
			t.Fatalf("Drop %d with no run under way: live %q, %v", i+1, live, err)
		}
	}
	if tables() != 0 {
		t.Error("the barrier's tables are still there after Drop")
	}
}

// row reads the state and reason of run name's row.
func (b barrier) row(name string, state, reason *string) error {
	s, err := b.tg.Session(b.ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.QueryRow(b.ctx, "SELECT state, reason FROM dbrig_part_runs WHERE name = $1", name).Scan(state, reason)
}

// TestBarrierNeedsCreatePostgres: a user who may not create tables in the
// database is told, in one line, that the barrier needs the privilege.
func TestBarrierNeedsCreatePostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := pgtest.NewDB(t)
	owner, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	s, err := owner.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var user string
	if err := s.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("parts_%d", time.Now().UnixNano())
	if _, err := s.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD 'rolepw'"); err != nil {
		t.Fatal(err)
	}
	defer s.Exec(context.Background(), "DROP ROLE "+role) // after its target is closed
	tg, err := postgres.Open(ctx, strings.Replace(url, "//"+user+"@", "//"+role+":rolepw@", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	_, err = Join(ctx, tg, options(1, 2, "r", 1))
	wantUserLine(t, "Join", err, "the barrier's tables could not be made there (the user needs the CREATE privilege): ", "permission denied")
}
