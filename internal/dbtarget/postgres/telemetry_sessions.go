package postgres

import (
	"context"
	"fmt"
	"strings"

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
	backend_type, coalesce(query_id::text, '')
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
// cost delay) stay out of it.
func (s *source) Sessions(ctx context.Context) ([]telemetry.Session, error) {
	var out []telemetry.Session
	err := s.sampler.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		out = out[:0]
		rows, err := c.Query(ctx, sessionsSQL, s.db)
		if err != nil {
			return err
		}
		var ss telemetry.Session
		_, err = pgx.ForEachRow(rows, []any{&ss.Class, &ss.Event, &ss.State, &ss.Backend, &ss.QueryID}, func() error {
			if ss.Class == "" {
				ss.Class, ss.Event = telemetry.CPUClass, telemetry.CPUClass
			}
			ss.Background = !foreground(ss.Backend)
			ss.Category = category(ss.Class, ss.Event)
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

func foreground(backendType string) bool {
	return backendType == "client backend" || backendType == "parallel worker"
}

// category maps a wait event to the category every target shares: the
// WAL's writes and flushes, and their locks, are commit; the other
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
		if event == "SyncRep" {
			return telemetry.WaitCommit
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
