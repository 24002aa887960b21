package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
)

// tableQuery reads one cumulative breakdown.
type tableQuery struct {
	table  telemetry.Table // its name, title and labels
	labels []string        // the SQL of each label
	stats  []stat
	text   string // the SQL of a row's text, "" for none
	from   string // the query from FROM on
}

func (q tableQuery) sql() string {
	text := "''"
	if q.text != "" {
		text = q.text
	}
	return "SELECT ARRAY[" + strings.Join(q.labels, ", ") + "]::text[], " + values(q.stats) + ", " + text + " " + q.from
}

func (q tableQuery) read(ctx context.Context, c *pgx.Conn) (telemetry.Table, error) {
	t := q.table
	for _, st := range q.stats {
		t.Columns = append(t.Columns, st.Column)
	}
	rows, err := c.Query(ctx, q.sql())
	if err != nil {
		return t, err
	}
	var labels []string
	var vs []float64
	var text string
	_, err = pgx.ForEachRow(rows, []any{&labels, &vs, &text}, func() error {
		t.Rows = append(t.Rows, telemetry.Row{Labels: labels, Values: vs, Text: text})
		// The next row must not scan into the slices this one keeps.
		labels, vs = nil, nil
		return nil
	})
	return t, err
}

func count(key, label string) telemetry.Column { return telemetry.Column{Key: key, Label: label} }

func millis(key, label string) telemetry.Column {
	return telemetry.Column{Key: key, Label: label, Unit: "ms"}
}

func volume(key, label string) telemetry.Column {
	return telemetry.Column{Key: key, Label: label, Unit: "bytes"}
}

// checkpoints is one row, the checkpointer's, from pg_stat_bgwriter up to
// 16 and pg_stat_checkpointer from 17, which renamed the columns.
func checkpoints(major int) tableQuery {
	from, exprs := "FROM pg_stat_checkpointer", []string{"num_timed", "num_requested", "write_time", "sync_time", "buffers_written"}
	if major < 17 {
		from, exprs = "FROM pg_stat_bgwriter", []string{"checkpoints_timed", "checkpoints_req",
			"checkpoint_write_time", "checkpoint_sync_time", "buffers_checkpoint"}
	}
	q := tableQuery{
		table:  telemetry.Table{Name: "checkpoints", Title: "Checkpoints", Labels: []string{"process"}},
		labels: []string{"'checkpointer'"},
		from:   from,
	}
	cols := []telemetry.Column{count("timed", "Timed"), count("requested", "Requested"),
		millis("write_time", "Write time"), millis("sync_time", "Sync time"), count("buffers_written", "Buffers written")}
	for i, c := range cols {
		q.stats = append(q.stats, stat{c, exprs[i]})
	}
	return q
}

// ioByBackend is pg_stat_io (16 on): IO by kind of process, kind of object
// (relation, temp relation, and from 18 wal) and context (normal, vacuum,
// bulkread, bulkwrite, and from 18 init). The times are 0 unless
// track_io_timing is on (track_wal_io_timing for WAL).
func ioByBackend(major int) tableQuery {
	// Up to 17 every operation moves op_bytes; 18 counts bytes itself,
	// since its IO combines several blocks and WAL writes vary in size.
	size := func(op string) string {
		if major >= 18 {
			return op + "_bytes"
		}
		return op + "s * op_bytes"
	}
	return tableQuery{
		table:  telemetry.Table{Name: "io_by_backend", Title: "IO by process type", Labels: []string{"backend_type", "object", "context"}},
		labels: []string{"backend_type", "object", "context"},
		stats: []stat{
			{count("reads", "Reads"), "reads"},
			{volume("read_bytes", "Read"), size("read")},
			{millis("read_time", "Read time"), "read_time"},
			{count("writes", "Writes"), "writes"},
			{volume("write_bytes", "Written"), size("write")},
			{millis("write_time", "Write time"), "write_time"},
			{count("extends", "Extends"), "extends"},
			{volume("extend_bytes", "Extended"), size("extend")},
			{count("hits", "Hits"), "hits"},
			{count("evictions", "Evictions"), "evictions"},
			{count("fsyncs", "Fsyncs"), "fsyncs"},
		},
		from: "FROM pg_stat_io",
	}
}

// statementText is as much of a statement's text as a report could want
// to show; pg_stat_statements keeps it whole.
const statementText = 1000

// topSQL is pg_stat_statements in schema, for this database, summed over
// users and nesting levels. Its read time is blk_read_time up to version
// 1.10 of the extension and shared_blk_read_time from 1.11 (PostgreSQL 17).
func topSQL(schema string, sharedReadTime bool) tableQuery {
	readTime := "blk_read_time"
	if sharedReadTime {
		readTime = "shared_blk_read_time"
	}
	return tableQuery{
		// Ordered by execution time, as AWR's "SQL ordered by Elapsed Time".
		table:  telemetry.Table{Name: "top_sql", Title: "Top SQL", Labels: []string{"queryid"}, Sort: 1},
		labels: []string{"queryid::text"},
		stats: []stat{
			{count("calls", "Calls"), "sum(calls)"},
			{millis("total_exec_time", "Execution time"), "sum(total_exec_time)"},
			{count("rows", "Rows"), "sum(rows)"},
			{count("shared_blks_hit", "Buffer hits"), "sum(shared_blks_hit)"},
			{count("shared_blks_read", "Buffer reads"), "sum(shared_blks_read)"},
			{millis("read_time", "Read time"), "sum(" + readTime + ")"},
		},
		text: fmt.Sprintf("left(min(query), %d)", statementText),
		// Statements of other users' show a NULL queryid to a user
		// without pg_read_all_stats: there is nothing to match them by.
		from: "FROM " + pgx.Identifier{schema, "pg_stat_statements"}.Sanitize() + `
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND queryid IS NOT NULL
			GROUP BY queryid ORDER BY sum(total_exec_time) DESC`,
	}
}

// objectNotInPrerequisiteState is pg_stat_statements' refusal when the
// extension is installed but its library was not preloaded.
const objectNotInPrerequisiteState = "55000"

// Tables reads the checkpoints, pg_stat_io where the server has it, and
// pg_stat_statements where the extension is installed in this database
// and loaded.
func (s *source) Tables(ctx context.Context) ([]telemetry.Table, error) {
	queries := []tableQuery{checkpoints(s.major)}
	if s.major >= 16 {
		queries = append(queries, ioByBackend(s.major))
	}
	var out []telemetry.Table
	// In the measured database: pg_stat_statements shows only where it is
	// installed. The edges are outside the measured window.
	err := s.edge.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		out = out[:0]
		for _, q := range queries {
			t, err := q.read(ctx, c)
			if err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
			out = append(out, t)
		}
		var schema string
		var sharedReadTime bool
		err := c.QueryRow(ctx, `SELECT n.nspname, EXISTS (SELECT FROM pg_attribute
				WHERE attrelid = format('%I.pg_stat_statements', n.nspname)::regclass AND attname = 'shared_blk_read_time')
			FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
			WHERE e.extname = 'pg_stat_statements'`).Scan(&schema, &sharedReadTime)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("finding pg_stat_statements: %w", err)
		}
		t, err := topSQL(schema, sharedReadTime).read(ctx, c)
		switch {
		case dbtarget.SQLState(err) == objectNotInPrerequisiteState:
			return nil
		case err != nil:
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		out = append(out, t)
		return nil
	})
	if err == nil {
		// Published now: the start edge's reads come before the window's
		// marks, and must not count inside the window.
		err = s.edge.do(ctx, s.t.flush)
	}
	if err != nil {
		return nil, fmt.Errorf("reading tables: %w", err)
	}
	return out, nil
}
