package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// call is a QueryRow on a statement the session prepared under its own
// name: its arguments encoded as pgx would, sent with pgconn, and its one
// row read straight from pgconn's buffers. pgx's Conn.QueryRow would
// allocate a result set and its scan plans on every call and look the
// plans up again for each row; a session makes the same few calls
// millions of times, so the call keeps its buffers and its columns of
// the common types (int4 and int8 into *int or *any, float8 into *float64 or *any, numeric text into *float64,
// text, varchar and bpchar into *string or *any)
// are read here, every other column through pgx's type map as pgx would.
type call struct {
	s   *session
	rr  *pgconn.ResultReader
	err error
	// The arguments as sent, reused from one call to the next: their
	// bytes, each one's end in buf, and its format.
	buf     []byte
	ends    []int
	values  [][]byte
	formats []int16
	// eqb encodes the arguments of calls with any of another type.
	eqb pgx.ExtendedQueryBuilder
}

// statement is a statement the session prepared, and the formats pgx
// asks its columns in.
type statement struct {
	sd      *pgconn.StatementDescription
	results []int16
}

// start sends st with args; Scan reads its result.
func (c *call) start(ctx context.Context, st *statement, args []any) {
	c.rr, c.err = nil, nil
	var values [][]byte
	var formats []int16
	if values, formats, c.err = c.args(st, args); c.err != nil {
		return
	}
	c.rr = c.s.c.PgConn().ExecStatement(ctx, st.sd, values, formats, st.results)
}

// args encodes args for st: the common types here (see encode), any
// other through pgx. The values last until the next call's.
func (c *call) args(st *statement, args []any) ([][]byte, []int16, error) {
	if values, formats := c.encode(st.sd.ParamOIDs, args); values != nil {
		return values, formats, nil
	}
	if err := c.eqb.Build(c.s.c.TypeMap(), st.sd, args); err != nil {
		return nil, nil, err
	}
	return c.eqb.ParamValues, c.eqb.ParamFormats, nil
}

// encode encodes args, for parameters of types oids, into the call's
// buffers as pgx would, where each is of the common types (int, []int32,
// time.Time, bool, float64 and string, for parameters of the matching
// types) and in its parameter's range; else, or if there are none, it
// returns nil, for pgx to encode them all.
func (c *call) encode(oids []uint32, args []any) ([][]byte, []int16) {
	if len(args) == 0 || len(oids) != len(args) {
		return nil, nil
	}
	c.buf, c.ends, c.formats = c.buf[:0], c.ends[:0], c.formats[:0]
	for i, a := range args {
		format, ok := int16(pgtype.BinaryFormatCode), false
		switch a := a.(type) {
		case int:
			c.buf, ok = appendInt(c.buf, oids[i], int64(a))
		case []int32:
			c.buf, ok = appendInt4Array(c.buf, oids[i], a)
		case time.Time:
			c.buf, ok = appendTimestamp(c.buf, oids[i], a)
		case bool:
			if ok = oids[i] == pgtype.BoolOID; ok {
				c.buf = append(c.buf, 0)
				if a {
					c.buf[len(c.buf)-1] = 1
				}
			}
		case float64:
			if ok = oids[i] == pgtype.Float8OID; ok {
				c.buf = binary.BigEndian.AppendUint64(c.buf, math.Float64bits(a))
			}
		case string:
			format = pgtype.TextFormatCode
			if ok = oids[i] == pgtype.TextOID || oids[i] == pgtype.VarcharOID || oids[i] == pgtype.BPCharOID; ok {
				c.buf = append(c.buf, a...)
			}
		}
		if !ok {
			return nil, nil
		}
		c.ends, c.formats = append(c.ends, len(c.buf)), append(c.formats, format)
	}
	c.values = c.values[:0]
	start := 0
	for _, end := range c.ends {
		c.values = append(c.values, c.buf[start:end:end])
		start = end
	}
	return c.values, c.formats
}

// appendInt appends v as an int4 or int8 parameter, in binary.
func appendInt(buf []byte, oid uint32, v int64) ([]byte, bool) {
	switch {
	case oid == pgtype.Int4OID && v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(buf, uint32(v)), true
	case oid == pgtype.Int8OID:
		return binary.BigEndian.AppendUint64(buf, uint64(v)), true
	}
	return buf, false
}

// appendInt4Array appends a as a one-dimensional int4[] parameter, in
// binary; an empty one is left to pgx.
func appendInt4Array(buf []byte, oid uint32, a []int32) ([]byte, bool) {
	if oid != pgtype.Int4ArrayOID || len(a) == 0 {
		return buf, false
	}
	// Dimensions, has nulls, element type, then the one dimension's length
	// and lower bound.
	for _, w := range [...]uint32{1, 0, pgtype.Int4OID, uint32(len(a)), 1} {
		buf = binary.BigEndian.AppendUint32(buf, w)
	}
	for _, v := range a {
		buf = binary.BigEndian.AppendUint32(buf, 4)
		buf = binary.BigEndian.AppendUint32(buf, uint32(v))
	}
	return buf, true
}

// y2k is PostgreSQL's epoch for timestamps.
var y2k = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix() * 1_000_000

// appendTimestamp appends t as a timestamp parameter, in binary: its
// wall clock in its own zone, as pgx sends it; or as a timestamptz, the
// instant.
func appendTimestamp(buf []byte, oid uint32, t time.Time) ([]byte, bool) {
	switch oid {
	case pgtype.TimestampOID:
		if t.Location() != time.UTC {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		}
	case pgtype.TimestamptzOID:
	default:
		return buf, false
	}
	us := t.Unix()*1_000_000 + int64(t.Nanosecond())/1000 - y2k
	return binary.BigEndian.AppendUint64(buf, uint64(us)), true
}

// Scan reads the call's first row into dest, as pgx's Row.Scan: no row
// is pgx.ErrNoRows, and the rest of the result is discarded.
func (c *call) Scan(dest ...any) error {
	return c.s.t.pooled(c.s.w.why(c.scan(dest)))
}

func (c *call) scan(dest []any) error {
	rr := c.rr
	if rr == nil {
		return c.err
	}
	c.rr = nil
	if !rr.NextRow() {
		if _, err := rr.Close(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	err := c.decode(rr.FieldDescriptions(), rr.Values(), dest)
	if _, cerr := rr.Close(); err == nil {
		err = cerr
	}
	return err
}

// decode reads a row's values into dest.
func (c *call) decode(fields []pgconn.FieldDescription, values [][]byte, dest []any) error {
	if len(fields) != len(dest) {
		return fmt.Errorf("number of field descriptions must equal number of destinations, got %d and %d", len(fields), len(dest))
	}
	for i, d := range dest {
		if d == nil || quick(fields[i], values[i], d) {
			continue
		}
		if err := c.s.c.TypeMap().Scan(fields[i].DataTypeOID, fields[i].Format, values[i], d); err != nil {
			return pgx.ScanArgError{ColumnIndex: i, FieldName: fields[i].Name, Err: err}
		}
	}
	return nil
}

// quick reads v, of column f, into d where both are of the common types
// and v is not NULL, and says whether it did; pgx's type map reads the
// rest, with the same results.
func quick(f pgconn.FieldDescription, v []byte, d any) bool {
	if v == nil {
		return false
	}
	switch d := d.(type) {
	case *int:
		switch {
		case f.Format != pgtype.BinaryFormatCode:
		case f.DataTypeOID == pgtype.Int4OID && len(v) == 4:
			*d = int(int32(binary.BigEndian.Uint32(v)))
			return true
		case f.DataTypeOID == pgtype.Int8OID && len(v) == 8 && strconv.IntSize == 64:
			*d = int(int64(binary.BigEndian.Uint64(v)))
			return true
		}
	case *any:
		// As pgx decodes them, which it plans anew on every call.
		switch {
		case f.Format != pgtype.BinaryFormatCode:
		case f.DataTypeOID == pgtype.Int4OID && len(v) == 4:
			*d = int32(binary.BigEndian.Uint32(v))
			return true
		case f.DataTypeOID == pgtype.Int8OID && len(v) == 8:
			*d = int64(binary.BigEndian.Uint64(v))
			return true
		case f.DataTypeOID == pgtype.Float8OID && len(v) == 8:
			*d = math.Float64frombits(binary.BigEndian.Uint64(v))
			return true
		}
		if text(f) {
			*d = string(v)
			return true
		}
	case *string:
		if text(f) {
			*d = string(v)
			return true
		}
	case *float64:
		switch {
		case f.DataTypeOID == pgtype.Float8OID && f.Format == pgtype.BinaryFormatCode && len(v) == 8:
			*d = math.Float64frombits(binary.BigEndian.Uint64(v))
			return true
		case f.DataTypeOID == pgtype.NumericOID && f.Format == pgtype.TextFormatCode:
			n, err := strconv.ParseFloat(string(v), 64)
			if err == nil {
				*d = n
			}
			return err == nil
		}
	}
	return false
}

// text says whether column f is of a type pgx reads as a string from its
// text format: text, varchar or bpchar.
func text(f pgconn.FieldDescription) bool {
	if f.Format != pgtype.TextFormatCode {
		return false
	}
	switch f.DataTypeOID {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID:
		return true
	}
	return false
}
