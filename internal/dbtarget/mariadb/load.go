package mariadb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/go-sql-driver/mysql"
)

// loadRows is how many rows one LOAD DATA statement, and so one
// transaction, takes: enough that statements cost nothing, few enough
// that InnoDB's undo for one stays small.
const loadRows = 100_000

var loads atomic.Int64

// loadData streams rows to the server with LOAD DATA LOCAL INFILE, the
// fastest load MariaDB has from a client, in tab-separated text encoded
// as the statement's FIELDS and LINES clauses read it.
func loadData(ctx context.Context, c *sql.Conn, table string, columns []string, src dbtarget.RowSource) (int64, error) {
	name := fmt.Sprintf("dbrig-%d", loads.Add(1))
	r := &rowReader{src: src}
	mysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler(name)
	// The columns are quoted: a name may be a reserved word (block-io's key).
	stmt := "LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE " + table +
		` CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\t' ESCAPED BY '\\' LINES TERMINATED BY '\n' (` +
		"`" + strings.Join(columns, "`,`") + "`)"
	var n int64
	for {
		r.rows, r.done = 0, false
		res, err := c.ExecContext(ctx, stmt)
		if err == nil {
			err = r.err
		}
		if err != nil {
			return n, fmt.Errorf("load %s: %w", table, err)
		}
		loaded, err := res.RowsAffected()
		if err != nil {
			return n, fmt.Errorf("load %s: %w", table, err)
		}
		n += loaded
		if r.rows < loadRows {
			return n, nil
		}
	}
}

// rowReader reads up to loadRows rows of src as LOAD DATA's text.
type rowReader struct {
	src  dbtarget.RowSource
	buf  bytes.Buffer
	rows int
	done bool
	err  error
}

func (r *rowReader) Read(p []byte) (int, error) {
	for r.buf.Len() < len(p) && !r.done {
		if r.rows == loadRows || !r.src.Next() {
			r.done = true
			if err := r.src.Err(); err != nil {
				r.err = err
			}
			break
		}
		vals, err := r.src.Values()
		if err != nil {
			r.err, r.done = err, true
			break
		}
		r.rows++
		for i, v := range vals {
			if i > 0 {
				r.buf.WriteByte('\t')
			}
			writeField(&r.buf, v)
		}
		r.buf.WriteByte('\n')
	}
	if r.buf.Len() == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	return r.buf.Read(p)
}

// writeField writes one value as LOAD DATA reads it: \N for NULL, and the
// escape character before anything that would end a field or a line.
func writeField(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString(`\N`)
	case string:
		escape(b, v)
	case []byte:
		escape(b, string(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int32:
		b.WriteString(strconv.FormatInt(int64(v), 10))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	case bool:
		if v {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	case time.Time:
		b.WriteString(v.Format("2006-01-02 15:04:05.999999"))
	default:
		escape(b, fmt.Sprint(v))
	}
}

func escape(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '\t', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
}
