package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

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
	s.attrs = readsAttrs(ctx, s.stats)
	s.useWaits(ctx)
	return s, nil
}

type source struct {
	t              *Target
	stats, sampler *sql.DB
	// sessionsSQL is what Sessions reads, with performance_schema's waits
	// or without; sessionsNote says which, in the settings.
	sessionsSQL, sessionsNote string
	// waits says sessionsSQL reads performance_schema's waits, so that a
	// statement at work with none is on CPU.
	waits bool
	// turnedOn are the performance_schema consumers this source turned
	// on, to turn off when it closes.
	turnedOn []string
	// attrs says the sessions' connection attributes can be read
	// (performance_schema's session_connect_attrs), where each one's
	// program_name tells the run's from other clients'.
	attrs bool
	// othersAt is when Others last read.
	othersAt time.Time
}

func (s *source) Close() error {
	errs := []error{s.restoreConsumers()}
	for _, db := range []*sql.DB{s.stats, s.sampler} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

func (s *source) Counters(ctx context.Context) (map[string]float64, error) {
	out, err := readStatus(ctx, s.stats, statusQuery, statusKeys)
	if err != nil {
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

// Settings are the global variables whose value did not come from the
// server's compiled-in default, and where the sampled sessions' waits
// come from (dbrig.sessions).
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
	settings["dbrig.sessions"] = s.sessionsNote
	return version, settings, rows.Err()
}

// Local finds the server on this host by its pid file, when that file is
// here and names a live process; a server elsewhere gives 0 and "".
func (s *source) Local(ctx context.Context) (int, string, error) { return localServer(ctx, s.stats) }

// localServer is where the server db reaches runs on this host: its
// process and data directory, or 0 and "" where it is elsewhere.
func localServer(ctx context.Context, db *sql.DB) (int, string, error) {
	var pidFile, dataDir string
	if err := db.QueryRowContext(ctx, "SELECT @@pid_file, @@datadir").Scan(&pidFile, &dataDir); err != nil {
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

// readStatus reads a SHOW GLOBAL STATUS query on db into the values of
// keys, each status variable under its key; a value that is not a number
// is left out.
func readStatus(ctx context.Context, db *sql.DB, query string, keys map[string]string) (map[string]float64, error) {
	rows, err := db.QueryContext(ctx, query)
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
			out[keys[name]] = v
		}
	}
	return out, rows.Err()
}
