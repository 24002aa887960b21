package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/telemetry"
)

var _ telemetry.Sourcer = (*Target)(nil)

// statusKeys maps SHOW GLOBAL STATUS's names to telemetry's keys: the
// generic ones where MariaDB keeps the same figure, prefixed ones where
// only it keeps it. Every figure is the server's, not one database's.
var statusKeys = map[string]string{
	"Com_commit":                       telemetry.Commits,
	"Com_rollback":                     telemetry.Rollbacks,
	"Innodb_buffer_pool_read_requests": telemetry.LogicalReads,
	"Innodb_buffer_pool_reads":         telemetry.PhysicalReads,
	"Innodb_buffer_pool_pages_flushed": telemetry.BlockWrites,
	"Innodb_os_log_written":            telemetry.WALBytes,
	"Innodb_deadlocks":                 telemetry.Deadlocks,
	"Innodb_data_reads":                "mariadb.data_reads",
	"Innodb_data_writes":               "mariadb.data_writes",
	"Innodb_data_read":                 "mariadb.data_read_bytes",
	"Innodb_data_written":              "mariadb.data_written_bytes",
	"Innodb_row_lock_waits":            "mariadb.row_lock_waits",
	"Innodb_row_lock_time":             "mariadb.row_lock_time_ms",
	"Innodb_history_list_length":       "mariadb.history_list_length",
}

// statusQuery reads statusKeys' figures in one statement.
var statusQuery = func() string {
	names := make([]string, 0, len(statusKeys))
	for name := range statusKeys {
		names = append(names, "'"+name+"'")
	}
	return "SHOW GLOBAL STATUS WHERE Variable_name IN (" + strings.Join(names, ",") + ")"
}()

// Telemetry opens the source's connections: one for the counters and
// settings, one for the sessions sampled ten times a second, so that a
// slow read of the former never delays the latter. SHOW and
// information_schema reads commit nothing, so they do not count in the
// Com_commit the workload reads.
func (t *Target) Telemetry(ctx context.Context) (telemetry.Source, error) {
	s := &source{t: t}
	var err error
	if s.stats, err = t.open(t.cfg); err == nil {
		s.sampler, err = t.open(t.cfg)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	for _, db := range []*sql.DB{s.stats, s.sampler} {
		db.SetMaxOpenConns(1)
	}
	return s, nil
}

type source struct {
	t              *Target
	stats, sampler *sql.DB
}

func (s *source) Close() error {
	var errs []error
	for _, db := range []*sql.DB{s.stats, s.sampler} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

func (s *source) Counters(ctx context.Context) (map[string]float64, error) {
	rows, err := s.stats.QueryContext(ctx, statusQuery)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[statusKeys[name]] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var size int64
	if err := s.stats.QueryRowContext(ctx,
		"SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE()").Scan(&size); err != nil {
		return nil, err
	}
	out[telemetry.DatabaseBytes] = float64(size)
	return out, nil
}

func (s *source) Tables(context.Context) ([]telemetry.Table, error) { return nil, nil }

// Sessions samples the process list: a session running a statement is
// on CPU unless its state says what it waits for. The sampler leaves out
// itself, idle connections and other databases' sessions. The server's
// own threads in the list (the event scheduler, replication's threads)
// are marked Background, so that their time stays out of database time,
// and are left out while they wait for work. InnoDB's own threads (page
// cleaner, purge) do not show in the process list from 10.5 on.
func (s *source) Sessions(ctx context.Context) ([]telemetry.Session, error) {
	rows, err := s.sampler.QueryContext(ctx, `SELECT user, command, COALESCE(state, '') FROM information_schema.processlist
WHERE id <> CONNECTION_ID() AND command <> 'Sleep'
  AND (db = DATABASE() OR user IN ('system user', 'event_scheduler') OR command IN ('Daemon', 'Binlog Dump'))`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []telemetry.Session
	for rows.Next() {
		var user, command, state string
		if err := rows.Scan(&user, &command, &state); err != nil {
			return nil, err
		}
		if ss, ok := session(user, command, state); ok {
			out = append(out, ss)
		}
	}
	return out, rows.Err()
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
// waiting.
var onCPU = map[string]bool{
	"": true, "executing": true, "Sending data": true,
	"Sorting result": true, "Creating sort index": true, "Copying to tmp table": true,
	"optimizing": true, "statistics": true, "preparing": true, "Updating": true,
	"updating": true, "Searching rows for update": true, "init": true, "end": true,
	"query end": true, "closing tables": true, "Opening tables": true, "checking permissions": true,
	"Starting cleanup": true, "Freeing items": true, "starting": true, "Reset for next command": true,
}

// stateCategory maps a process list state to the category every target
// shares. The list cannot see InnoDB's row lock waits: a session waiting
// on a row shows the statement's own state ("Updating").
func stateCategory(state string) string {
	low := strings.ToLower(state)
	switch {
	case onCPU[state]:
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

// session is one row of the process list; false for a server's thread
// waiting for work. A thread of the server's own is background, named by
// its command ("Daemon", "Binlog Dump", "Slave_SQL") or, for the event
// scheduler, by its user.
func session(user, command, state string) (telemetry.Session, bool) {
	ss := telemetry.Session{Class: "State", Event: state, State: command, Backend: "client", Category: stateCategory(state)}
	if onCPU[state] {
		ss.Class, ss.Event = telemetry.CPUClass, telemetry.CPUClass
	}
	switch {
	case user == "event_scheduler":
		ss.Backend, ss.Background = "event scheduler", true
	case user == "system user" || command == "Daemon" || command == "Binlog Dump" || strings.HasPrefix(command, "Slave_"):
		ss.Backend, ss.Background = command, true
	}
	return ss, !ss.Background || !idleThread[state]
}

// Settings are the global variables whose value did not come from the
// server's compiled-in default.
func (s *source) Settings(ctx context.Context) (string, map[string]string, error) {
	version, err := s.t.Version(ctx)
	if err != nil {
		return "", nil, err
	}
	rows, err := s.stats.QueryContext(ctx,
		"SELECT LOWER(variable_name), COALESCE(global_value, '') FROM information_schema.system_variables WHERE global_value_origin <> 'COMPILE-TIME'")
	if err != nil {
		return version, nil, err
	}
	defer rows.Close()
	settings := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return version, nil, err
		}
		settings[name] = value
	}
	return version, settings, rows.Err()
}

// Local finds the server on this host by its pid file, when that file is
// here and names a live process; a server elsewhere gives 0 and "".
func (s *source) Local(ctx context.Context) (int, string, error) {
	var pidFile, dataDir string
	if err := s.stats.QueryRowContext(ctx, "SELECT @@pid_file, @@datadir").Scan(&pidFile, &dataDir); err != nil {
		return 0, "", err
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, "", nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, "", nil
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		return 0, "", nil
	}
	if _, err := os.Stat(dataDir); err != nil {
		return 0, "", nil
	}
	return pid, strings.TrimSuffix(dataDir, "/"), nil
}
