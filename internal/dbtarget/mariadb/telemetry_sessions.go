package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/telemetry"
)

// sessionsSQL reads the process list's sessions worth counting, with
// their InnoDB transaction's state: the list cannot see a row lock wait
// (a session waiting on a row shows its statement's own state,
// "Updating"), INNODB_TRX can. Left out: the sampler itself, other
// databases' sessions and idle connections; kept: a connection idle in a
// transaction, which holds its locks while the client thinks (as
// PostgreSQL's idle in transaction). The server's own threads in the list
// (the event scheduler, replication's) stay, to be marked Background.
// With performance_schema (waits true), each session's current waits
// come along, innermost last: a statement's table handler call ("wait/io/
// table") is its work, not a wait, so only what it waits on inside shows.
// With attrs, each session's program_name connection attribute, which
// tells the run's sessions from other clients'.
func sessionsSQL(waits, attrs bool) string {
	wait, join, order := "'', ''", "", "p.id"
	if waits {
		wait = "COALESCE(w.event_name, ''), COALESCE(w.operation, '')"
		join = `
LEFT JOIN performance_schema.threads t ON t.processlist_id = p.id
LEFT JOIN performance_schema.events_waits_current w ON w.thread_id = t.thread_id
  AND w.end_event_id IS NULL AND w.event_name NOT LIKE 'wait/io/table/%'`
		order += ", w.event_id"
	}
	program, attrsJoin := programSQL(attrs)
	return `SELECT p.id, p.user, COALESCE(p.host, ''), ` + program + `, p.command, COALESCE(p.state, ''), COALESCE(x.trx_state, ''), ` + wait + `
FROM information_schema.processlist p
LEFT JOIN information_schema.innodb_trx x ON x.trx_mysql_thread_id = p.id` + attrsJoin + join + `
WHERE p.id <> CONNECTION_ID() AND (p.command <> 'Sleep' OR x.trx_id IS NOT NULL)
  AND (p.db = DATABASE() OR p.user IN ('system user', 'event_scheduler') OR p.command IN ('Daemon', 'Binlog Dump'))
ORDER BY ` + order
}

// programSQL is the column of a process list's row that holds its
// program_name attribute, and the join that reads it, with attrs; an
// empty column without.
func programSQL(attrs bool) (column, join string) {
	if !attrs {
		return "''", ""
	}
	return "COALESCE(a.attr_value, '')", `
LEFT JOIN performance_schema.session_connect_attrs a ON a.processlist_id = p.id AND a.attr_name = '` + programName + `'`
}

// othersSQL reads, at an edge of the window, the client sessions in the
// measured database that were at work within the last ? ms, or are now:
// a session asleep (between statements) for less than that ran one since
// the previous edge.
func othersSQL(attrs bool) string {
	program, join := programSQL(attrs)
	return `SELECT p.id, p.user, COALESCE(p.host, ''), ` + program + `
FROM information_schema.processlist p` + join + `
WHERE p.id <> CONNECTION_ID() AND p.db = DATABASE() AND (p.command <> 'Sleep' OR p.time_ms <= ?)
  AND p.user NOT IN ('system user', 'event_scheduler') AND p.command NOT IN ('Daemon', 'Binlog Dump')`
}

// process is one row of sessionsSQL.
type process struct {
	client
	command, state  string
	trx             string // INNODB_TRX's trx_state, "" without a transaction
	wait, operation string // performance_schema's innermost current wait
}

// client is who a process list's session is: its id, its user and host,
// and its program_name where performance_schema shows it.
type client struct {
	id                  int64
	user, host, program string
}

// name is the client's name as the telemetry records it: its program's,
// else its user's and host's (without the port a TCP client came from).
func (c client) name() string {
	if c.program != "" {
		return c.program
	}
	host := c.host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return c.user + "@" + host
}

// Sessions samples the process list, with performance_schema's waits
// when the source found it on (source.waits). The server's own threads
// in the list are marked Background, so that their time stays out of
// database time, and are left out while they wait for work. InnoDB's own
// threads (page cleaner, purge) do not show in the process list from
// 10.5 on, and are left out.
func (s *source) Sessions(ctx context.Context) ([]telemetry.Session, error) {
	rows, err := s.sampler.QueryContext(ctx, s.sessionsSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []process
	last := int64(-1)
	for rows.Next() {
		var p process
		if err := rows.Scan(&p.id, &p.user, &p.host, &p.program, &p.command, &p.state, &p.trx, &p.wait, &p.operation); err != nil {
			return nil, err
		}
		// A session's nested waits come in the order they began: the
		// last is what it waits on now.
		if p.id == last {
			out[len(out)-1] = p
			continue
		}
		out, last = append(out, p), p.id
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var kept []telemetry.Session
	for _, p := range out {
		ss, ok := session(p, s.waits)
		if !ok {
			continue
		}
		if !ss.Background && s.other(p.client) {
			ss.Other, ss.ID, ss.Client = true, strconv.FormatInt(p.id, 10), p.name()
		}
		kept = append(kept, ss)
	}
	return kept, nil
}

// other says c is another client's session than the run's: a session the
// target opened is the run's, by its id; with the connections' attributes
// read, so is one of another process that carries the run's program_name
// (a part of the run). Where the source cannot tell (canTell), none is.
func (s *source) other(c client) bool {
	switch {
	case s.canTell() != nil, s.t.ids.has(c.id):
		return false
	case s.attrs:
		return c.program != s.t.name
	}
	return true
}

// canTell says why the source cannot tell the run's sessions from other
// clients', nil where it can: without the connections' attributes, a run
// in parts knows the ids of its own process's connections only.
func (s *source) canTell() error {
	if !s.attrs && s.t.shared {
		return errShared
	}
	return nil
}

var errShared = errors.New("a run in parts tells its parts' sessions from other clients' by their program_name, which only performance_schema shows (start the server with performance_schema=ON)")

// readsAttrs says the connections' attributes can be read: performance_schema
// is on, and shows this connection's.
func readsAttrs(ctx context.Context, db *sql.DB) bool {
	var n int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM performance_schema.session_connect_attrs WHERE processlist_id = CONNECTION_ID()").Scan(&n)
	return err == nil && n > 0
}

// othersMargin widens the span Others looks back over by what the
// client's clock cannot see: a process list is read, and each session's
// sleep timed, by the server, some time after the client's clock starts.
const othersMargin = time.Second

// Others reads the process list at an edge of the window: the other
// clients' sessions in the measured database at work now, or since the
// previous edge, by how long each has slept since its last statement.
func (s *source) Others(ctx context.Context) ([]telemetry.Session, error) {
	if err := s.canTell(); err != nil {
		return nil, err
	}
	now := time.Now()
	within := int64(0)
	if !s.othersAt.IsZero() {
		within = (now.Sub(s.othersAt) + othersMargin).Milliseconds()
	}
	rows, err := s.stats.QueryContext(ctx, othersSQL(s.attrs), within)
	if err != nil {
		return nil, fmt.Errorf("reading other clients' sessions: %w", err)
	}
	defer rows.Close()
	var out []telemetry.Session
	for rows.Next() {
		var c client
		if err := rows.Scan(&c.id, &c.user, &c.host, &c.program); err != nil {
			return nil, err
		}
		if s.other(c) {
			out = append(out, telemetry.Session{Other: true, ID: strconv.FormatInt(c.id, 10), Client: c.name(), Backend: "client"})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	s.othersAt = now
	return out, nil
}

// idleThread are the states in which the server's own threads wait for
// work, as a PostgreSQL background process waits on an Activity event.
var idleThread = map[string]bool{
	"Waiting on empty queue": true, "Waiting for next activation": true,
	"Waiting for master to send event": true, "Slave has read all relay log; waiting for more updates": true,
	"Master has sent all binlog to slave; waiting for more updates": true, "Waiting for work from SQL thread": true,
	"Waiting for INSERT": true,
}

// onCPU are the process list's states of a statement at work rather than
// waiting, in lower case: MariaDB 10.11 names some of them with a capital
// ("Executing", "Optimizing") where 10.5 did not.
var onCPU = map[string]bool{
	"": true, "executing": true, "sending data": true,
	"sorting result": true, "creating sort index": true, "copying to tmp table": true,
	"optimizing": true, "statistics": true, "preparing": true, "updating": true, "update": true,
	"insert": true, "searching rows for update": true, "init": true, "end": true,
	"query end": true, "closing tables": true, "opening tables": true, "after opening tables": true,
	"checking permissions": true, "starting cleanup": true, "freeing items": true, "starting": true,
	"reset for next command": true, "end of update loop": true, "creating tmp table": true,
	"removing tmp table": true, "sorting": true, "init for update": true,
	"updating main table": true, "updating reference tables": true,
}

func stateOnCPU(state string) bool { return onCPU[strings.ToLower(state)] }

// unseenWaits is the event of a statement at work when performance_schema
// is off: on CPU, or in an IO wait the process list does not show.
const unseenWaits = "CPU or an IO wait (performance_schema off)"

// stateCategory maps a process list state to the category every target
// shares.
func stateCategory(state string) string {
	low := strings.ToLower(state)
	switch {
	case onCPU[low]:
		return telemetry.WaitCPU
	case strings.Contains(low, "commit"):
		return telemetry.WaitCommit
	case strings.Contains(low, "lock"):
		return telemetry.WaitLock
	case strings.Contains(low, "to net") || strings.Contains(low, "to client") || strings.Contains(low, "reading from net"):
		return telemetry.WaitClient
	}
	return telemetry.WaitOther
}

// session is one process; false for a server's thread waiting for work.
// Its wait is, first to last: a row lock InnoDB says it waits on; the
// client, for a connection idle in its transaction; performance_schema's
// current wait; else the process list's state, which tells a statement
// at work from one waiting on what the state names. At work with
// performance_schema's waits read (waits), and none current, a statement
// is on CPU; without them it may as well wait on a data file, which the
// process list does not show, so it is "engine", not CPU. A thread of the
// server's own is background, named by its command ("Daemon", "Binlog
// Dump", "Slave_SQL") or, for the event scheduler, by its user.
func session(p process, waits bool) (telemetry.Session, bool) {
	ss := telemetry.Session{State: p.command, Backend: "client"}
	switch {
	case p.trx == "LOCK WAIT":
		ss.Class, ss.Event, ss.Category = "Lock", "row", telemetry.WaitLock
	case p.command == "Sleep":
		ss.Class, ss.Event, ss.Category = "Client", "idle", telemetry.WaitClient
	case p.wait != "":
		ss.Class, ss.Event, ss.Category = instrumentWait(p.wait, p.operation)
	case stateOnCPU(p.state) && waits:
		ss.Class, ss.Event, ss.Category = telemetry.CPUClass, telemetry.CPUClass, telemetry.WaitCPU
	case stateOnCPU(p.state):
		ss.Class, ss.Event, ss.Category = "State", unseenWaits, telemetry.WaitEngine
	default:
		ss.Class, ss.Event, ss.Category = "State", p.state, stateCategory(p.state)
	}
	switch {
	case p.user == "event_scheduler":
		ss.Backend, ss.Background = "event scheduler", true
	case p.user == "system user" || p.command == "Daemon" || p.command == "Binlog Dump" || strings.HasPrefix(p.command, "Slave_"):
		ss.Backend, ss.Background = p.command, true
	}
	return ss, !ss.Background || !idleThread[p.state]
}
