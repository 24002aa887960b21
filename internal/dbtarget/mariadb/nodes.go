package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/sqldb"
	"github.com/dbrig/dbrig/internal/human"
)

// A URL of several hosts names the nodes of a cluster that all take
// writes (MariaDB Galera): each session goes to the node its key picks
// (dbtarget.WithNode), round-robin by default, and to the next node that
// takes it when that one does not. The target's own reads go to the
// first node that answers, and the server's counters are every node's
// summed: each node counts the commits of its own clients only.

var _ dbtarget.Spread = (*Target)(nil)

// nodes is where a target's sessions go: a pool per node, the first the
// target's own (Target.db), and what went where.
type nodes struct {
	addrs []string
	// pools are the nodes' connection pools, the first Target.db's.
	pools []*sql.DB
	mu    sync.Mutex
	// placed counts the sessions each node took.
	placed []int
	moves  []dbtarget.Move
	moved  func(dbtarget.Move)
}

// openPeers opens a pool for every node but the first, each with cfg's
// settings at its own address.
func (t *Target) openPeers() error {
	t.nodes.pools = t.nodes.pools[:0]
	t.nodes.pools = append(t.nodes.pools, t.db.SQL)
	for _, addr := range t.nodes.addrs[1:] {
		cfg := t.cfg.Clone()
		cfg.Addr = addr
		db, err := t.open(cfg)
		if err != nil {
			t.closePeers()
			return err
		}
		t.nodes.pools = append(t.nodes.pools, db)
	}
	t.nodes.placed = make([]int, len(t.nodes.addrs))
	return nil
}

// closePeers closes every node's pool but the first's.
func (t *Target) closePeers() {
	for _, db := range t.nodes.pools[1:] {
		db.Close()
	}
	t.nodes.pools = t.nodes.pools[:1]
}

// Nodes names the nodes by their addresses.
func (t *Target) Nodes() []string { return slices.Clone(t.nodes.addrs) }

// Placed is how many sessions each node took, of those opened with a
// node key (the run's, not the target's own), and the moves.
func (t *Target) Placed() ([]int, []dbtarget.Move) {
	t.nodes.mu.Lock()
	defer t.nodes.mu.Unlock()
	return slices.Clone(t.nodes.placed), slices.Clone(t.nodes.moves)
}

// OnMove has the target call moved as a session goes elsewhere.
func (t *Target) OnMove(moved func(dbtarget.Move)) {
	t.nodes.mu.Lock()
	defer t.nodes.mu.Unlock()
	t.nodes.moved = moved
}

// Session opens a session on the node ctx's key picks (the first node
// without one), else on the next node that takes it, set to the run's
// isolation level.
func (t *Target) Session(ctx context.Context) (dbtarget.Session, error) {
	n := len(t.nodes.pools)
	key, keyed := dbtarget.NodeKey(ctx)
	first := (key%n + n) % n
	var why error
	for i := range n {
		at := (first + i) % n
		db := t.db
		db.SQL = t.nodes.pools[at]
		s, err := t.isolated(ctx, &db)
		if err == nil && n > 1 {
			// The pool may hand out an idle connection to a node lost
			// since, which only its first statement finds dead: the
			// session would go back to the lost node and fail there.
			if _, err = s.Exec(ctx, "DO 0"); err != nil {
				s.Close()
			}
		}
		if err == nil {
			if keyed {
				t.place(first, at, why)
			}
			return s, nil
		}
		if n == 1 || dbtarget.NodeOnly(ctx) || t.Classify(err) != dbtarget.ErrConnLost || ctx.Err() != nil {
			return nil, err
		}
		if why == nil {
			why = err
		}
	}
	return nil, why
}

// isolated opens a session of db at the run's isolation level.
func (t *Target) isolated(ctx context.Context, db *sqldb.DB) (dbtarget.Session, error) {
	s, err := db.Session(ctx)
	if err != nil || t.isolation == "" {
		return s, err
	}
	if _, err := s.Exec(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL "+t.isolation.SQL()); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// place counts a session opened on node at, whose key picked first.
func (t *Target) place(first, at int, why error) {
	t.nodes.mu.Lock()
	t.nodes.placed[at]++
	if at == first {
		t.nodes.mu.Unlock()
		return
	}
	m := dbtarget.Move{From: t.nodes.addrs[first], To: t.nodes.addrs[at], Why: t.scrub(human.OneLine(why))}
	t.nodes.moves = append(t.nodes.moves, m)
	moved := t.nodes.moved
	t.nodes.mu.Unlock()
	if moved != nil {
		moved(m)
	}
}

// eachNode runs read on every node's pool, and says how many answered:
// a node that is lost is left out, and only an error of another kind, or
// none answering, is an error.
func (t *Target) eachNode(ctx context.Context, read func(i int, db *sql.DB) error) (answered int, err error) {
	var lost error
	for i, db := range t.nodes.pools {
		err := read(i, db)
		switch {
		case err == nil:
			answered++
		case len(t.nodes.pools) > 1 && t.Classify(err) == dbtarget.ErrConnLost && ctx.Err() == nil:
			lost = errors.Join(lost, err)
		default:
			return answered, err
		}
	}
	if answered == 0 {
		return 0, lost
	}
	return answered, nil
}

// anyNode runs read on the first node that answers.
func (t *Target) anyNode(ctx context.Context, read func(db *sql.DB) error) error {
	done := false
	_, err := t.eachNode(ctx, func(_ int, db *sql.DB) error {
		if done {
			return nil
		}
		if err := read(db); err != nil {
			return err
		}
		done = true
		return nil
	})
	return err
}

// Xacts is the count of COMMIT and ROLLBACK statements of every node
// that answers, summed: a node counts its own clients' statements, not
// the write sets it applies for the others. MariaDB keeps it for the
// whole server, not per database, so another database's traffic counts
// in it too; a statement that commits by itself (autocommit) does not. A
// Galera node's transaction that fails certification counts twice, its
// COMMIT and the ROLLBACK after it: its certification failures are
// taken off, so that it counts once, as any other attempt (3 nodes,
// 1 warehouse, 6 VUs: 2,851 failures in 30 s put the two sides 20%
// apart, and 1.0% after). What is left is a transaction aborted for
// another node's write set while it commits, before its own is sent,
// which counts twice too and which no status variable counts apart:
// taking off the replays as well put the sides 0.6% apart the other way. The status values are text: summed as they are they make a
// DOUBLE, which database/sql will not scan into an integer from a million
// on (it formats it as 1e+06 first), so the sum is cast.
func (t *Target) Xacts(ctx context.Context) (int64, bool, error) {
	var sum int64
	_, err := t.eachNode(ctx, func(_ int, db *sql.DB) error {
		var n int64
		err := db.QueryRowContext(ctx,
			"SELECT CAST(SUM(IF(variable_name = 'WSREP_LOCAL_CERT_FAILURES', -variable_value, variable_value)) AS SIGNED) FROM information_schema.global_status WHERE variable_name IN ('COM_COMMIT', 'COM_ROLLBACK', 'WSREP_LOCAL_CERT_FAILURES')").Scan(&n)
		sum += n
		return err
	})
	return sum, err == nil, err
}

// ServerAddr names the nodes that answer, each by its host name and
// port as it sees itself: a window whose edges were read on other nodes
// gives its counters no rate.
func (t *Target) ServerAddr(ctx context.Context) (string, error) {
	var at []string
	_, err := t.eachNode(ctx, func(_ int, db *sql.DB) error {
		var host string
		var port int
		err := db.QueryRowContext(ctx, "SELECT @@hostname, @@port").Scan(&host, &port)
		if err == nil {
			at = append(at, net.JoinHostPort(host, strconv.Itoa(port)))
		}
		return err
	})
	return strings.Join(at, ","), err
}

// Started is when the latest of the nodes that answer started, to the
// second: a node that restarts starts its counters again. UNIX_TIMESTAMP()
// and Uptime are both read at the statement's start, so their difference
// is the same on every read within one life of the server.
func (t *Target) Started(ctx context.Context) (time.Time, error) {
	var latest time.Time
	_, err := t.eachNode(ctx, func(_ int, db *sql.DB) error {
		var at int64
		err := db.QueryRowContext(ctx,
			"SELECT CAST(UNIX_TIMESTAMP() - variable_value AS SIGNED) FROM information_schema.global_status WHERE variable_name = 'UPTIME'").Scan(&at)
		if s := time.Unix(at, 0); err == nil && s.After(latest) {
			latest = s
		}
		return err
	})
	return latest, err
}

var _ dbtarget.Isolator = (*Target)(nil)

// Isolate sets every session opened from now on to level, with one
// statement as it opens. Under serializable InnoDB reads with shared
// locks, so readers and writers deadlock where they would not at
// repeatable read (MariaDB's default), and the driver retries them.
func (t *Target) Isolate(level dbtarget.Isolation) error {
	t.isolation = level
	return nil
}
