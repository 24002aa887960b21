package mariadb

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// waitConsumers are the performance_schema consumers a session's current
// wait needs: a consumer records only when those above it do. MariaDB
// 10.11 starts with the first two on and events_waits_current off; its
// default instruments time file IO, table locks and idle waits, not
// latches (wait/synch).
var waitConsumers = []string{"global_instrumentation", "thread_instrumentation", "events_waits_current"}

// useWaits chooses where Sessions reads waits from, and says which in
// sessionsNote. With performance_schema on, each session's current wait
// (events_waits_current), turning its consumers on for the run where
// they are off: they cost little beside the instruments already timing,
// and need no restart. Where performance_schema is off (a startup-only
// setting) or its consumers cannot be turned on, the process list's
// states, which tell less (no IO, no latch).
func (s *source) useWaits(ctx context.Context) {
	s.sessionsSQL = sessionsSQL(false, s.attrs)
	var on bool
	if err := s.stats.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil || !on {
		s.sessionsNote = "process list and INNODB_TRX: performance_schema is off (start the server with performance_schema=ON for its waits)"
		return
	}
	off, err := offConsumers(ctx, s.stats)
	if err == nil && len(off) > 0 {
		_, err = s.stats.ExecContext(ctx, setConsumers(off, true))
	}
	if err != nil {
		s.sessionsNote = "process list and INNODB_TRX: performance_schema's consumers could not be turned on (" + human.OneLine(err) +
			"); start the server with performance_schema_consumer_events_waits_current=ON, or grant UPDATE on performance_schema.setup_consumers"
		return
	}
	s.turnedOn, s.sessionsSQL, s.waits = off, sessionsSQL(true, s.attrs), true
	s.sessionsNote = "performance_schema's events_waits_current, with the process list and INNODB_TRX"
	if len(off) > 0 {
		s.sessionsNote += "; dbrig turned on its consumers " + strings.Join(off, ", ") + " for the run, and off after"
	}
	var latches int
	if err := s.stats.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM performance_schema.setup_instruments WHERE name LIKE 'wait/synch/%' AND enabled = 'YES'").Scan(&latches); err == nil && latches == 0 {
		s.sessionsNote += "; no wait/synch instrument is on, so latch waits count as CPU (start with performance-schema-instrument='wait/synch/%=ON' to see them, at a cost)"
	}
}

// offConsumers are waitConsumers that are off.
func offConsumers(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM performance_schema.setup_consumers WHERE enabled <> 'YES' AND name IN ("+quoteAll(waitConsumers)+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var off []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		off = append(off, name)
	}
	return off, rows.Err()
}

func setConsumers(names []string, on bool) string {
	value := "NO"
	if on {
		value = "YES"
	}
	return "UPDATE performance_schema.setup_consumers SET enabled = '" + value + "' WHERE name IN (" + quoteAll(names) + ")"
}

func quoteAll(names []string) string {
	return "'" + strings.Join(names, "', '") + "'"
}

// restoreConsumers turns off the consumers useWaits turned on.
func (s *source) restoreConsumers() error {
	if len(s.turnedOn) == 0 || s.stats == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.stats.ExecContext(ctx, setConsumers(s.turnedOn, false))
	return err
}

// instrumentWait names a performance_schema wait ("wait/io/file/innodb/
// innodb_data_file", operation "read") as a class, an event and the
// category every target shares. The redo log and the binary log are
// commits' waits; other files' reads are reads (of data, or of temporary
// files), their writes and syncs writes; a socket or idle wait is the
// client's; table and metadata locks are locks; mutexes and read-write
// locks latches.
func instrumentWait(name, operation string) (class, event, category string) {
	if name == "idle" {
		return "Client", "idle", telemetry.WaitClient
	}
	parts := strings.Split(name, "/")
	if len(parts) < 4 {
		return "Other", name, telemetry.WaitOther
	}
	event = parts[len(parts)-1]
	switch parts[1] + "/" + parts[2] {
	case "io/file":
		event, category = fileEvent(event, operation)
		return "IO", event, category
	case "io/socket":
		return "Client", event, telemetry.WaitClient
	case "lock/table", "lock/metadata":
		return "Lock", parts[2], telemetry.WaitLock
	case "synch/mutex":
		return "Mutex", event, telemetry.WaitLatch
	case "synch/rwlock", "synch/sxlock":
		return "RWLock", event, telemetry.WaitLatch
	case "synch/cond":
		if strings.Contains(strings.ToLower(event), "commit") {
			return "Cond", event, telemetry.WaitCommit
		}
		return "Cond", event, telemetry.WaitOther
	}
	return "Other", event, telemetry.WaitOther
}

// fileEvent names a file wait by its file and operation, as a data file's
// reads and writes fall in different categories.
func fileEvent(file, operation string) (string, string) {
	switch {
	case file == "innodb_log_file" || strings.HasPrefix(file, "binlog"):
		return file, telemetry.WaitCommit
	case operation == "read":
		return file + " read", telemetry.WaitRead
	case operation == "write" || operation == "sync" || operation == "flush" || operation == "chsize":
		return file + " write", telemetry.WaitWrite
	}
	return file + " " + operation, telemetry.WaitOther
}
