package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// multiSession is a session whose batches each go as one text query, the
// statements joined by ';' and their arguments interpolated by the
// driver, which escapes them: one round trip where a session would make
// one a statement; BatchOpen and BatchClose may enclose them. The server
// parses the batch's text every time, since
// it holds no prepared statement for it; a single statement still runs
// prepared.
type multiSession struct {
	*session
	// natives are the batches' statements in the driver's form.
	natives map[string]native
	text    strings.Builder
	args    []any
}

var _ dbtarget.Batcher = (*multiSession)(nil)

// Batch sends qs as one query. The server runs the statements in order
// and stops at the first error, which Batch returns as the driver gave
// it, so it classifies as that statement's error would alone.
func (s *multiSession) Batch(ctx context.Context, qs []dbtarget.Query) error {
	s.text.Reset()
	s.text.WriteString(s.db.BatchOpen)
	s.args = s.args[:0]
	for i := range qs {
		n, ok := s.natives[qs[i].SQL]
		if !ok {
			sql := strings.TrimRight(qs[i].SQL, "; \t\r\n")
			if s.db.BatchBegin != "" && strings.EqualFold(strings.TrimSpace(sql), "BEGIN") {
				sql = s.db.BatchBegin
			}
			n = newNative(sql, s.db.Placeholders)
			s.natives[qs[i].SQL] = n
		}
		if i > 0 {
			// The line break ends a comment the statement may end with.
			s.text.WriteString("\n;")
		}
		s.text.WriteString(n.text)
		var err error
		if s.args, err = n.lay(s.args, qs[i].Args); err != nil {
			return err
		}
	}
	if s.db.BatchClose != "" {
		s.text.WriteString("\n;" + s.db.BatchClose)
	}
	rows, err := s.c.QueryContext(ctx, s.text.String(), s.args...)
	clear(s.args)
	if err != nil {
		return err
	}
	err = readResults(rows, qs)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// readResults reads the results of qs from rows. The driver passes over
// the results of statements that return no rows, so each query with Dest
// or Each, which must return rows, takes the next result set, and any
// other must return none. The rest is read through, for an error in a
// statement after the last that returns rows.
func readResults(rows *sql.Rows, qs []dbtarget.Query) error {
	next := false
	for i := range qs {
		q := &qs[i]
		if q.Dest == nil && q.Each == nil {
			continue
		}
		if next && !rows.NextResultSet() {
			if err := rows.Err(); err != nil {
				return err
			}
			return fmt.Errorf("no result for statement %d of the batch: %.60s", i+1, q.SQL)
		}
		next = true
		if err := q.Read(resultSet{rows}); err != nil {
			return err
		}
	}
	for rows.NextResultSet() {
	}
	return rows.Err()
}

// resultSet is one result set of a batch's rows, which its reader does not
// close: the batch closes them after the last.
type resultSet struct{ *sql.Rows }

func (resultSet) Close() {}
