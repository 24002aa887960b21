package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

var _ telemetry.Sourcer = (*Target)(nil)

// telemetryApp names the telemetry's connections in pg_stat_activity, so
// that the session sampler can leave them out.
const telemetryApp = "dbrig telemetry"

var _ telemetry.Source = (*source)(nil)

// source is PostgreSQL's side of telemetry, for versions 15 and later.
//
// Every transaction in the measured database counts in its commits, which
// a workload reads as its database-side throughput, so the frequent reads
// (counters every second, sessions ten times a second, about 660
// transactions a minute) go through connections to the server's
// maintenance database and name the measured one; only the reads at the
// window's edges, outside it, use the measured database itself (edge):
// the settings and extensions there, and pg_stat_statements, which shows
// only where it is installed. Those at the start are published (flushed)
// before the window's first mark and sample, and those at the end come
// after its last, so they never count inside it either; the flush's own
// transaction is counted out like the sessions'. Where the maintenance
// database will not take a connection, everything runs in the measured
// database and the settings say so.
//
// stats reads counters and settings, sampler only the sessions, so that
// a slow read of the former never delays the 10 Hz sampling.
type source struct {
	t        *Target
	major    int // of server_version_num
	version  string
	db       string // the measured database
	shared   bool   // stats and sampler connect to db itself
	stats    *link
	sampler  *link
	edge     *link
	counters []stat
	// commits is the Commits Counters last returned, held against
	// dbrig's own flushes (see monotonic).
	mu      sync.Mutex
	commits float64
	// othersSince is when Others last read, by the server's clock.
	othersSince time.Time
}

// stat is one figure a query reads: a counter or a table's column, with
// the SQL expression that reads it for the server's version.
type stat struct {
	telemetry.Column
	expr string
}

// maintenanceDB is where the telemetry's frequent reads connect.
const maintenanceDB = "postgres"

// Telemetry opens the connections the source needs; Close closes them.
func (t *Target) Telemetry(ctx context.Context) (telemetry.Source, error) {
	cfg := t.cfg.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = telemetryApp
	s := &source{t: t, db: t.db}
	var err error
	if s.edge, err = t.link(ctx, cfg); err != nil {
		return nil, err
	}
	side := cfg.Copy()
	side.Database = maintenanceDB
	if s.stats, err = t.link(ctx, side); err != nil {
		s.shared, side = true, cfg
		s.stats, err = t.link(ctx, side)
	}
	if err == nil {
		err = s.stats.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
			return c.QueryRow(ctx, "SELECT current_setting('server_version_num')::int / 10000, current_setting('server_version')").
				Scan(&s.major, &s.version)
		})
	}
	if err == nil {
		s.sampler, err = t.link(ctx, side)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	s.counters = counters(s.major)
	return s, nil
}

func (s *source) Close() error {
	var errs []error
	for _, l := range []*link{s.edge, s.stats, s.sampler} {
		if l != nil {
			errs = append(errs, l.close())
		}
	}
	return errors.Join(errs...)
}

// counters are the cumulative totals for the measured database (d) and
// the cluster's WAL (w), background writer (b) and, from 17 on,
// checkpointer (c).
func counters(major int) []stat {
	cs := []stat{
		{telemetry.Column{Key: telemetry.Commits}, "d.xact_commit"},
		{telemetry.Column{Key: telemetry.Rollbacks}, "d.xact_rollback"},
		{telemetry.Column{Key: telemetry.LogicalReads}, "d.blks_hit + d.blks_read"},
		{telemetry.Column{Key: telemetry.PhysicalReads}, "d.blks_read"},
		{telemetry.Column{Key: telemetry.ReadTimeMs}, "d.blk_read_time"},
		{telemetry.Column{Key: telemetry.TempBytes}, "d.temp_bytes"},
		{telemetry.Column{Key: telemetry.Deadlocks}, "d.deadlocks"},
		{telemetry.Column{Key: telemetry.DatabaseBytes}, "pg_database_size(d.datid)"},
		{telemetry.Column{Key: telemetry.WALBytes}, "w.wal_bytes"},
		{telemetry.Column{Key: telemetry.WALRecords}, "w.wal_records"},
		{telemetry.Column{Key: "pg.wal_fpi"}, "w.wal_fpi"},
		{telemetry.Column{Key: "pg.wal_buffers_full"}, "w.wal_buffers_full"},
		{telemetry.Column{Key: "pg.temp_files"}, "d.temp_files"},
		{telemetry.Column{Key: "pg.tup_returned"}, "d.tup_returned"},
		{telemetry.Column{Key: "pg.tup_fetched"}, "d.tup_fetched"},
		{telemetry.Column{Key: "pg.tup_inserted"}, "d.tup_inserted"},
		{telemetry.Column{Key: "pg.tup_updated"}, "d.tup_updated"},
		{telemetry.Column{Key: "pg.tup_deleted"}, "d.tup_deleted"},
		{telemetry.Column{Key: "pg.active_time_ms"}, "d.active_time"},
		{telemetry.Column{Key: "pg.idle_in_transaction_time_ms"}, "d.idle_in_transaction_time"},
		{telemetry.Column{Key: "pg.buffers_clean"}, "b.buffers_clean"},
		{telemetry.Column{Key: "pg.maxwritten_clean"}, "b.maxwritten_clean"},
	}
	if major < 17 {
		return append(cs,
			stat{telemetry.Column{Key: telemetry.Checkpoints}, "b.checkpoints_timed + b.checkpoints_req"},
			// Every buffer written out of shared buffers, by whichever
			// process wrote it.
			stat{telemetry.Column{Key: telemetry.BlockWrites}, "b.buffers_checkpoint + b.buffers_clean + b.buffers_backend"},
			stat{telemetry.Column{Key: "pg.buffers_backend"}, "b.buffers_backend"},
		)
	}
	// 17 moved the checkpointer's figures to pg_stat_checkpointer and
	// dropped buffers_backend; what it counted (writes by any process but
	// the checkpointer and the background writer) is now in pg_stat_io,
	// so block_writes means the same on every version.
	const backendWrites = `(SELECT sum(writes) FROM pg_stat_io
		WHERE object = 'relation' AND backend_type NOT IN ('checkpointer', 'background writer'))`
	return append(cs,
		stat{telemetry.Column{Key: telemetry.Checkpoints}, "c.num_timed + c.num_requested"},
		stat{telemetry.Column{Key: telemetry.BlockWrites}, "c.buffers_written + b.buffers_clean + " + backendWrites},
		stat{telemetry.Column{Key: "pg.buffers_backend"}, backendWrites},
	)
}

// values is an SQL array of the stats' values, NULL read as 0 (pg_stat_io
// leaves NULL what a kind of process never does).
func values(stats []stat) string {
	exprs := make([]string, len(stats))
	for i, st := range stats {
		exprs[i] = "coalesce((" + st.expr + ")::float8, 0)"
	}
	return "ARRAY[" + strings.Join(exprs, ", ") + "]"
}

// Counters reads every counter in one round trip.
func (s *source) Counters(ctx context.Context) (map[string]float64, error) {
	from := "pg_stat_database d, pg_stat_wal w, pg_stat_bgwriter b"
	if s.major >= 17 {
		from += ", pg_stat_checkpointer c"
	}
	sql := "SELECT " + values(s.counters) + " FROM " + from + " WHERE d.datname = $1"
	var vs []float64
	flushed := s.t.flushes.Load()
	err := s.stats.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, sql, s.db).Scan(&vs)
	})
	if err != nil {
		return nil, fmt.Errorf("reading counters: %w", err)
	}
	out := make(map[string]float64, len(vs))
	for i, st := range s.counters {
		out[st.Key] = vs[i]
	}
	// The flushes are dbrig's transactions, not the workload's (see Xacts).
	out[telemetry.Commits] = s.monotonic(out[telemetry.Commits]-float64(flushed), flushed)
	return out, nil
}

// monotonic keeps the workload's commits from stepping back by dbrig's
// own flushes. A flush publishes its transaction before Flush counts it,
// so a reading between the two is one high, and the next, with nothing
// else published in the second between (two VUs' backends publish once a
// second at most), one lower: a step back that the window's summary takes
// for a server that forgot its statistics, adding the whole counter (a CI
// run counted 8,406 commits where the run made 3,442). A step back no
// larger than the flushes so far is held at the highest reading; a reset
// drops the counter to what was done since, far more.
func (s *source) monotonic(commits float64, flushed int64) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if commits < s.commits && s.commits-commits <= float64(flushed) {
		return s.commits
	}
	s.commits = commits
	return commits
}

// Settings reads every setting someone chose: those at their default are
// left out, and so are those the server fills in itself ('override': the
// paths of its files, the transaction's isolation) and those this
// connection set ('client': its application_name and encoding). A value
// that may hold a secret is hidden. The extensions installed in the
// database come under "extensions". They are read in the measured
// database, where ALTER DATABASE may have set some of them.
func (s *source) Settings(ctx context.Context) (string, map[string]string, error) {
	out := map[string]string{}
	if s.shared {
		out["dbrig.telemetry"] = "reads in the measured database (no connection to " + maintenanceDB + "): its own transactions, about 11 a second, count in the database's commits"
	}
	err := s.edge.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT name, current_setting(name) FROM pg_settings
			WHERE source NOT IN ('default', 'override', 'client')
			UNION ALL
			SELECT 'extensions', string_agg(extname || ' ' || extversion, ', ' ORDER BY extname) FROM pg_extension`)
		if err != nil {
			return err
		}
		var name string
		var value *string
		_, err = pgx.ForEachRow(rows, []any{&name, &value}, func() error {
			if value != nil {
				out[name] = redactSetting(name, *value)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("reading settings: %w", err)
	}
	return s.version, out, nil
}

// secretWords in a setting's name mark a value that may hold a secret:
// primary_conninfo carries a password, ssl_passphrase_command may too,
// and an extension's api_key or token is one.
var secretWords = []string{"password", "passphrase", "conninfo", "key", "secret", "token"}

func redactSetting(name, value string) string {
	lower := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(lower, w) && value != "" {
			return "xxxxx"
		}
	}
	return value
}

// Local finds the postmaster of the server the stats connection reaches
// (see localServer).
func (s *source) Local(ctx context.Context) (int, string, error) {
	var pid int
	var dataDir string
	err := s.stats.do(ctx, func(ctx context.Context, c *pgx.Conn) (err error) {
		pid, dataDir, err = localServer(ctx, c)
		return err
	})
	if err != nil {
		return 0, "", fmt.Errorf("finding the server: %w", err)
	}
	return pid, dataDir, nil
}

// localServer finds the postmaster from c's backend, whose parent it is,
// and believes it only if its working directory is the data directory
// (the postmaster changes into it): a backend PID read from a server in
// another PID namespace (a container) or on another host names some
// unrelated process here, or none. 0 and "" where it is not on this host,
// or a role that may not read data_directory cannot tell.
func localServer(ctx context.Context, c *pgx.Conn) (int, string, error) {
	var pid int
	var dataDir string
	err := c.QueryRow(ctx, "SELECT pg_backend_pid(), current_setting('data_directory')").Scan(&pid, &dataDir)
	if dbtarget.SQLState(err) == insufficientPrivilege {
		// Only superusers and pg_read_all_settings may read data_directory.
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	if pm := postmasterOf("/proc", pid, dataDir); pm > 0 {
		return pm, dataDir, nil
	}
	return 0, "", nil
}

const insufficientPrivilege = "42501"

// postmasterOf is the parent of backend pid under the proc tree at proc,
// if that parent works in dataDir; 0 otherwise, and when another user's
// process is closed to us.
func postmasterOf(proc string, pid int, dataDir string) int {
	stat, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// The parent is the second field after the command, which is in
	// parentheses and may hold blanks.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid <= 1 {
		return 0
	}
	cwd, err := os.Readlink(filepath.Join(proc, strconv.Itoa(ppid), "cwd"))
	if err != nil {
		return 0
	}
	if real, err := filepath.EvalSymlinks(dataDir); err == nil && cwd == real || cwd == filepath.Clean(dataDir) {
		return ppid
	}
	return 0
}
