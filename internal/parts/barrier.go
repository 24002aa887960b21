package parts

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/workload"
)

//go:embed sql
var sqlFS embed.FS

const (
	// DefaultName is --part-run's default: the barrier row's name.
	DefaultName = "dbrig"
	// DefaultTimeout is --part-timeout's default.
	DefaultTimeout = 2 * time.Minute
	// maxName is the longest run name the barrier's row takes.
	maxName = 100
	// poll is how often a part waiting at the barrier looks again.
	poll = 200 * time.Millisecond
	// grace is how long after its window closed (and its hold) a started
	// run keeps its row from a new leader: its parts are still reading
	// their marks and writing their documents.
	grace = 10 * time.Second
	// giveUp is how long past the deadline, on its own clock, a part
	// waits for a database that does not answer.
	giveUp = 10 * time.Second
	// baseLead is the least time between the schedule's being fixed and
	// its start, in which every part reads it, closes its barrier session
	// and gets its virtual users' clocks going.
	baseLead = 2 * time.Second
	// minHold is the least hold at each edge of the window. The leader
	// reads the database halfway through it, so a part's transaction in
	// hand at the edge that ends within half of it still counts on both
	// sides: TPROC-C's Delivery took 400 ms at the end edge of 10,000
	// terminals in 4 parts, past half of the 500 ms this was.
	minHold = time.Second
)

// The states of a run's row.
const (
	gathering = "gathering"
	started   = "started"
	failed    = "failed"
)

// Options are what a part brings to the barrier.
type Options struct {
	Part driver.Part
	// Name is --part-run: the barrier row's name, so that two split runs
	// on one database meet only their own parts ("" is DefaultName).
	Name string
	// Timeout is --part-timeout: how long the leader's run waits for
	// every part to be ready (0 is DefaultTimeout).
	Timeout          time.Duration
	Rampup, Duration time.Duration
	// Seed is this process's seed (0: the workload has none); the leader's
	// becomes the run's.
	Seed uint64
	// Config is the run's configuration as its document will hold it,
	// for a seed: the runner reseeds the run with seed and returns
	// r.Config() plus its own keys. Join calls it with the run's seed.
	Config func(seed uint64) (map[string]any, error)
	// Host is os.Hostname, for the member row and messages.
	Host string
}

// Member is one part joined to a run at the barrier.
type Member struct {
	t      dbtarget.Target
	o      Options
	q      workload.SQLFile
	s      dbtarget.Session
	pid    int
	leader bool
	runID  string
	seed   uint64
	sha    string
	clock  Clock
	rtt    time.Duration
	// deadline is the run's, on the server's clock (µs).
	deadline int64
}

// Check refuses, in one line, a target whose dialect keeps no barrier:
// a database that only one host reaches.
func Check(d dbtarget.Dialect) error {
	_, err := load(d)
	return err
}

// load reads the barrier's SQL for dialect d.
func load(d dbtarget.Dialect) (workload.SQLFile, error) {
	q, err := workload.LoadSQL(sqlFS, "sql", d, "parts.sql")
	var ue *exitcode.UserError
	if errors.As(err, &ue) {
		return nil, exitcode.Userf("--part: a split run's parts meet in the target database, and a %s database cannot hold their barrier: it is one host's, and parts are for several; run one process", d.Name)
	}
	return q, err
}

// Join brings this part to the barrier of the run o.Name names, on a
// session of its own: it measures the clock's offset, then in one
// transaction, the run's row locked, either leads a new run (the row is
// new, failed, gathering past its deadline, or started long enough ago
// that its run is over) or joins the one gathering. A follower takes the
// run's seed, and fails the run when its part count or configuration
// differs; a part whose index is there already, or that comes to a run
// under way, fails alone.
func Join(ctx context.Context, t dbtarget.Target, o Options) (*Member, error) {
	if o.Part.Of < 2 || o.Part.Index < 1 || o.Part.Index > o.Part.Of {
		return nil, fmt.Errorf("parts: Join of part %+v, not one of a split", o.Part)
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if len(o.Name) > maxName {
		return nil, exitcode.Userf("--part-run %q: at most %d characters", o.Name, maxName)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	q, err := load(t.Dialect())
	if err != nil {
		return nil, err
	}
	s, err := t.Session(ctx)
	if err != nil {
		return nil, err
	}
	m := &Member{t: t, o: o, q: q, s: s, pid: os.Getpid()}
	if err := m.join(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return m, nil
}

func (m *Member) join(ctx context.Context) error {
	if err := m.create(ctx); err != nil {
		return err
	}
	var err error
	if m.clock, m.rtt, err = measure(ctx, time.Now, m.now); err != nil {
		return err
	}
	if _, err := m.s.Exec(ctx, m.q.Get("insert_run"), m.o.Name); err != nil {
		return err
	}
	return m.tx(ctx, m.enter)
}

// create makes the barrier's tables where they are not. Parts that
// arrive together may race to make them, which PostgreSQL can refuse to
// all but one even with IF NOT EXISTS: a refused part tries again, and
// finds them made.
func (m *Member) create(ctx context.Context) error {
	var err error
	for try := range 3 {
		if try > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		err = nil
		for _, st := range m.q.Statements("create") {
			if _, err = m.s.Exec(ctx, st); err != nil {
				break
			}
		}
		if err == nil {
			return nil
		}
	}
	return exitcode.Userf("--part: the parts meet in the target database, and the barrier's tables could not be made there (the user needs the CREATE privilege): %s",
		human.OneLine(err))
}

// tx runs f in a transaction, committed unless f's err says otherwise,
// and again where the database asks for another try (a deadlock); after
// is f's outcome once committed.
func (m *Member) tx(ctx context.Context, f func(context.Context) (after, err error)) error {
	for try := 1; ; try++ {
		_, err := m.s.Exec(ctx, m.q.Get("begin"))
		if err != nil {
			return err
		}
		after, err := f(ctx)
		if err == nil {
			if _, err = m.s.Exec(ctx, m.q.Get("commit")); err == nil {
				return after
			}
		}
		m.s.Exec(context.WithoutCancel(ctx), m.q.Get("rollback"))
		if try == 3 || m.t.Classify(err) != dbtarget.ErrRetry {
			return err
		}
	}
}

// enter is Join's transaction, from the start on each try.
func (m *Member) enter(ctx context.Context) (after, err error) {
	m.leader, m.runID, m.seed, m.sha, m.deadline = false, "", 0, "", 0
	r, err := scanRun(m.s.QueryRow(ctx, m.q.Get("lock_run"), m.o.Name))
	if err != nil {
		return nil, err
	}
	now, err := m.now(ctx)
	if err != nil {
		return nil, err
	}
	if r.stale(now) {
		return nil, m.lead(ctx, r, now)
	}
	ms, err := m.members(ctx, r.id)
	if err != nil {
		return nil, err
	}
	for _, o := range ms {
		if o.part == m.o.Part.Index {
			return exitcode.Userf("part %s is already here: host %s, pid %d, since %s (run %s); this process leaves it",
				m.o.Part, o.host, o.pid, clockTime(o.joined), r.id), nil
		}
	}
	if r.state == started {
		return exitcode.Userf("--part-run %q: run %s is under way (started %s, its window closes %s), so part %s cannot join it; wait until it ends, or name another --part-run",
			m.o.Name, r.id, clockTime(r.start), clockTime(r.closes), m.o.Part), nil
	}
	if r.parts != m.o.Part.Of {
		return m.failIn(ctx, r, fmt.Sprintf("part %d's part count %d differs from part %d's %d: every part must be one of the same --part i/n",
			m.o.Part.Index, m.o.Part.Of, r.leader, r.parts))
	}
	m.seed = uint64(r.seed)
	canonical, sha, err := m.config(m.seed)
	if err != nil {
		return nil, err
	}
	if sha != r.sha {
		keys, ours, theirs, err := differs(canonical, []byte(r.config))
		if err != nil {
			return nil, err
		}
		return m.failIn(ctx, r, mismatch(m.o.Part.Index, r.leader, keys, ours, theirs))
	}
	m.runID, m.sha, m.deadline = r.id, sha, r.deadline
	return nil, m.insertMember(ctx, now)
}

// lead takes the run's row for a new run this part leads.
func (m *Member) lead(ctx context.Context, r run, now int64) error {
	canonical, sha, err := m.config(m.o.Seed)
	if err != nil {
		return err
	}
	if r.id != "" {
		if _, err := m.s.Exec(ctx, m.q.Get("forget_members"), r.id); err != nil {
			return err
		}
	}
	m.leader, m.runID, m.seed, m.sha = true, newRunID(), m.o.Seed, sha
	m.deadline = now + m.o.Timeout.Microseconds()
	_, err = m.s.Exec(ctx, m.q.Get("reset_run"), m.o.Name, m.runID, m.o.Part.Of, m.o.Part.Index,
		int64(m.seed), string(canonical), sha, now, m.deadline)
	if err != nil {
		return err
	}
	return m.insertMember(ctx, now)
}

func (m *Member) config(seed uint64) ([]byte, string, error) {
	cfg, err := m.o.Config(seed)
	if err != nil {
		return nil, "", err
	}
	canonical, sha := Canonical(cfg)
	return canonical, sha, nil
}

func (m *Member) insertMember(ctx context.Context, now int64) error {
	_, err := m.s.Exec(ctx, m.q.Get("insert_member"), m.runID, m.o.Part.Index, m.o.Host, m.pid, now)
	return err
}

// failIn fails the gathering run r for reason, inside Join's
// transaction, and returns reason as this part's error once committed.
func (m *Member) failIn(ctx context.Context, r run, reason string) (after, err error) {
	if _, err := m.s.Exec(ctx, m.q.Get("fail_run"), m.o.Name, r.id, reason); err != nil {
		return nil, err
	}
	return exitcode.Userf("%s", reason), nil
}

// now is the server's clock, in µs since 1970.
func (m *Member) now(ctx context.Context) (int64, error) { return serverNow(ctx, m.s, m.q) }

// serverNow is the server's clock as s reads it, in µs since 1970.
func serverNow(ctx context.Context, s dbtarget.Session, q workload.SQLFile) (int64, error) {
	var us int64
	err := s.QueryRow(ctx, q.Get("now_us")).Scan(&us)
	return us, err
}

// newRunID is a random (version 4) UUID.
func newRunID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// clockTime is a server instant (µs) as messages write it.
func clockTime(us int64) string {
	return time.UnixMicro(us).UTC().Format("15:04:05 UTC")
}

func (m *Member) Leader() bool         { return m.leader }
func (m *Member) RunID() string        { return m.runID }
func (m *Member) ConfigSHA256() string { return m.sha }
func (m *Member) Clock() Clock         { return m.clock }
