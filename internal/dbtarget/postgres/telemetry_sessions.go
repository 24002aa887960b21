package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

// sessionsSQL reads the sessions worth counting, cheaply enough for ten
// times a second (pgx prepares it once per connection). Left out:
//   - the telemetry's own connections, this sampler's included;
//   - sessions in other databases of the same server, as the load profile
//     counts only this database's (the server's background processes,
//     which belong to none, stay);
//   - idle client sessions;
//   - background processes idling in their main loop, which wait on an
//     Activity event (CheckpointerMain, WalWriterMain...), or on an
//     Extension event when they are an extension's worker (autoprewarm).
//
// Kept: sessions idle in a transaction. They are not active, but they hold
// their transaction's locks and snapshot while the client thinks, and a
// client-bound run shows as time on Client/ClientRead, apart from the
// server's own work (HammerDB counts them too).
const sessionsSQL = `SELECT coalesce(wait_event_type, ''), coalesce(wait_event, ''), coalesce(state, ''),
	backend_type, coalesce(query_id::text, ''), pid, coalesce(backend_start, 'epoch'), coalesce(application_name, '')
FROM pg_stat_activity
WHERE application_name IS DISTINCT FROM '` + telemetryApp + `'
  AND (datname IS NULL OR datname = $1)
  AND state IS DISTINCT FROM 'idle'
  AND wait_event_type IS DISTINCT FROM 'Activity'
  AND NOT (wait_event_type = 'Extension' AND backend_type NOT IN ('client backend', 'parallel worker'))`

// Sessions reads pg_stat_activity once. A session without a wait event is
// on CPU. The clients' sessions (client backends and their parallel
// workers) are the foreground, whose time is database time; every other
// kind (autovacuum, the checkpointer, the WAL writer...) is marked
// Background, so that its sleeps (a checkpoint's throttle, a vacuum's
// cost delay) stay out of it. A client backend named otherwise than the
// run's sessions is another client's (Other); its parallel workers are
// not counted as sessions of their own.
func (s *source) Sessions(ctx context.Context) ([]telemetry.Session, error) {
	var out []telemetry.Session
	err := s.sampler.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		out = out[:0]
		rows, err := c.Query(ctx, sessionsSQL, s.db)
		if err != nil {
			return err
		}
		var ss telemetry.Session
		var pid int32
		var started time.Time
		_, err = pgx.ForEachRow(rows, []any{&ss.Class, &ss.Event, &ss.State, &ss.Backend, &ss.QueryID, &pid, &started, &ss.Client}, func() error {
			if ss.Class == "" {
				ss.Class, ss.Event = telemetry.CPUClass, telemetry.CPUClass
			}
			ss.Background = !foreground(ss.Backend)
			ss.Category = category(ss.Class, ss.Event)
			ss.Other = ss.Backend == clientBackend && s.t.other(ss.Client)
			ss.ID = sessionID(pid, started)
			out = append(out, ss)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sampling sessions: %w", err)
	}
	return out, nil
}

// clientBackend is the backend_type of a client's session.
const clientBackend = "client backend"

// sessionID tells a backend from every other over the server's life: a
// process id comes back in time, with another start.
func sessionID(pid int32, started time.Time) string {
	return fmt.Sprintf("%d@%d", pid, started.UnixMicro())
}

// othersSQL reads the other clients' sessions in the measured database
// that were active since $2 (none idle, where it is NULL): the run's own,
// and the telemetry's of every dbrig, are told apart by their names after.
const othersSQL = `SELECT pid, coalesce(backend_start, 'epoch'), coalesce(application_name, '')
FROM pg_stat_activity
WHERE datname = $1 AND backend_type = '` + clientBackend + `'
  AND application_name IS DISTINCT FROM '` + telemetryApp + `'
  AND (state IS DISTINCT FROM 'idle' OR state_change >= $2)`

// Others reads pg_stat_activity at an edge of the window, on the stats
// connection (outside the measured database, as the sampler's): the
// other clients' sessions active since the previous edge, a session
// idle now included where its last statement ended after it (its
// state_change), so that short transactions between the sampler's looks
// are found. A session whose user the target's cannot see the state of
// (without pg_read_all_stats) counts as active.
func (s *source) Others(ctx context.Context) ([]telemetry.Session, error) {
	var out []telemetry.Session
	err := s.stats.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		out = out[:0]
		var now time.Time
		if err := c.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&now); err != nil {
			return err
		}
		var since any
		if !s.othersSince.IsZero() {
			since = s.othersSince
		}
		rows, err := c.Query(ctx, othersSQL, s.db, since)
		if err != nil {
			return err
		}
		var pid int32
		var started time.Time
		var app string
		_, err = pgx.ForEachRow(rows, []any{&pid, &started, &app}, func() error {
			if s.t.other(app) {
				out = append(out, telemetry.Session{Other: true, ID: sessionID(pid, started), Client: app, Backend: clientBackend})
			}
			return nil
		})
		if err == nil {
			s.othersSince = now
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading other clients' sessions: %w", err)
	}
	return out, nil
}

func foreground(backendType string) bool {
	return backendType == clientBackend || backendType == "parallel worker"
}

// category maps a wait event to the category every target shares: the
// WAL's writes and flushes, and their locks, are commit, and a commit's
// wait for its synchronous standbys (SyncRep) replication; the other
// LWLocks and buffer pins latches; heavyweight locks (a row's
// transactionid, a relation's, a tuple's) locks; IO reads of data, SLRU or
// temp files reads and the rest of IO writes.
func category(class, event string) string {
	switch class {
	case telemetry.CPUClass:
		return telemetry.WaitCPU
	case "Lock":
		return telemetry.WaitLock
	case "LWLock", "BufferPin":
		if walLock[event] {
			return telemetry.WaitCommit
		}
		return telemetry.WaitLatch
	case "IO":
		switch {
		case walIO[event]:
			return telemetry.WaitCommit
		case event == "WALRead":
			return telemetry.WaitOther
		case strings.HasSuffix(event, "Read") || event == "DataFilePrefetch":
			return telemetry.WaitRead
		}
		return telemetry.WaitWrite
	case "IPC":
		// A commit held until its synchronous standbys confirm it.
		if event == "SyncRep" {
			return telemetry.WaitReplication
		}
	case "Client":
		return telemetry.WaitClient
	}
	return telemetry.WaitOther
}

// walLock and walIO are the waits of a commit's WAL flush.
var (
	walLock = map[string]bool{"WALWrite": true, "WALInsert": true, "WALBufMapping": true}
	walIO   = map[string]bool{"WALSync": true, "WALWrite": true, "WALInitSync": true, "WALInitWrite": true, "WALSyncMethodAssign": true}
)
