package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// copyIn loads src into table as binary COPY, encoding the values dbrig's
// generators make (int, string, float64 into numeric, time.Time, nil)
// itself and anything else through pgx's type map. pgx's CopyFrom took
// 60% of a tproc-c build's client CPU in its per-value plan lookups, and a
// quarter in numeric from float64 (text, then big.Int); encoded here, a
// build of 4 warehouses took 1.0-1.3 s of client CPU instead of 2.6.
func (s *session) copyIn(ctx context.Context, table string, columns []string, src dbtarget.RowSource) (int64, error) {
	s.w.unwatched()
	oids := make([]uint32, len(columns))
	for i, c := range columns {
		if err := s.c.QueryRow(ctx, "SELECT atttypid FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2",
			pgx.Identifier{table}.Sanitize(), c).Scan(&oids[i]); err != nil {
			return 0, fmt.Errorf("column %s.%s: %w", table, c, err)
		}
	}
	pr, pw := io.Pipe()
	var rows int64
	var panicked error
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		// The rows are the workload's code, on a goroutine of their own:
		// a panic there is the load's error.
		defer exitcode.Recover(func(p error) { panicked = p; pw.CloseWithError(p) })
		pw.CloseWithError(encodeRows(pw, s.c.TypeMap(), oids, src, &rows))
	}()
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	_, err := s.c.PgConn().CopyFrom(ctx, pr,
		"COPY "+pgx.Identifier{table}.Sanitize()+" ("+strings.Join(quoted, ", ")+") FROM STDIN (FORMAT binary)")
	pr.CloseWithError(io.ErrClosedPipe) // a writer still at work stops
	<-wrote
	if panicked != nil {
		return rows, panicked
	}
	return rows, err
}

// encodeRows writes src as a binary COPY stream, in writes of about
// 512 kB, counting the rows. A dbtarget.FieldSource writes its values
// straight into the stream (copyWriter), with no interface to box each;
// any other source's values go through the same encoding, by their type.
func encodeRows(w io.Writer, m *pgtype.Map, oids []uint32, src dbtarget.RowSource, rows *int64) error {
	c := &copyWriter{buf: make([]byte, 0, 1<<20), m: m, oids: oids}
	c.buf = append(c.buf, "PGCOPY\n\377\r\n\000"...)
	c.buf = binary.BigEndian.AppendUint64(c.buf, 0) // flags, header extension
	write := func() (bool, error) {
		if !src.Next() {
			return false, nil
		}
		vals, err := src.Values()
		for _, v := range vals {
			c.value(v)
		}
		return true, err
	}
	if fs, ok := src.(dbtarget.FieldSource); ok {
		write = func() (bool, error) { return fs.WriteRow(c), nil }
	}
	for {
		at := len(c.buf)
		c.buf = binary.BigEndian.AppendUint16(c.buf, uint16(len(oids)))
		c.col = 0
		more, err := write()
		if err != nil {
			return err
		}
		if !more {
			c.buf = c.buf[:at]
			break
		}
		if c.err == nil && c.col != len(oids) {
			c.err = fmt.Errorf("a row of %d values for %d columns", c.col, len(oids))
		}
		if c.err != nil {
			return c.err
		}
		*rows++
		if len(c.buf) >= 1<<19 {
			if _, err := w.Write(c.buf); err != nil {
				return err
			}
			c.buf = c.buf[:0]
		}
	}
	if err := src.Err(); err != nil {
		return err
	}
	_, err := w.Write(binary.BigEndian.AppendUint16(c.buf, 0xffff))
	return err
}

// copyWriter appends a row's values, length first, to a binary COPY
// stream, each as its column's type's binary form: the values dbrig's
// generators make (int into int4 and int8, strings into the text types,
// float64 into numeric, time.Time in UTC into timestamp, NULL) itself,
// anything else as pgx encodes it. A value past the last column, or that
// pgx cannot encode, sets err, and the rest of the row is not encoded.
type copyWriter struct {
	buf  []byte
	m    *pgtype.Map
	oids []uint32 // the columns' types
	col  int      // values written to the row so far
	err  error
}

// next is the type of the row's next column, 0 past the last (or after
// an error).
func (c *copyWriter) next() uint32 {
	c.col++
	if c.err != nil {
		return 0
	}
	if c.col > len(c.oids) {
		c.err = fmt.Errorf("a row of more than %d values", len(c.oids))
		return 0
	}
	return c.oids[c.col-1]
}

func (c *copyWriter) Int(v int) {
	switch oid := c.next(); oid {
	case pgtype.Int4OID:
		c.buf = be.AppendUint32(be.AppendUint32(c.buf, 4), uint32(int32(v)))
	case pgtype.Int8OID:
		c.buf = be.AppendUint64(be.AppendUint32(c.buf, 8), uint64(v))
	default:
		c.pgx(oid, v)
	}
}

func (c *copyWriter) Text(s string) {
	switch oid := c.next(); oid {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID:
		c.buf = append(be.AppendUint32(c.buf, uint32(len(s))), s...)
	default:
		c.pgx(oid, s)
	}
}

func (c *copyWriter) TextBytes(b []byte) {
	switch oid := c.next(); oid {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID:
		c.buf = append(be.AppendUint32(c.buf, uint32(len(b))), b...)
	default:
		c.pgx(oid, string(b))
	}
}

// Float encodes money and rates itself; pgx takes the rest (NaN,
// infinities, magnitudes whose shortest text is long).
func (c *copyWriter) Float(f float64) {
	if oid := c.next(); oid == pgtype.NumericOID && math.Abs(f) < 1e15 && (f == 0 || math.Abs(f) >= 1e-6) {
		c.buf = appendNumeric(c.buf, f)
	} else {
		c.pgx(oid, f)
	}
}

func (c *copyWriter) Time(t time.Time) {
	if oid := c.next(); oid == pgtype.TimestampOID && t.Location() == time.UTC {
		c.buf = be.AppendUint64(be.AppendUint32(c.buf, 8), uint64(t.UnixMicro()-pgEpochMicros))
	} else {
		c.pgx(oid, t)
	}
}

func (c *copyWriter) Null() {
	c.next()
	c.buf = be.AppendUint32(c.buf, 0xffffffff)
}

// value writes v by its type, as the method for that type would.
func (c *copyWriter) value(v any) {
	switch x := v.(type) {
	case nil:
		c.Null()
	case int:
		c.Int(x)
	case string:
		c.Text(x)
	case float64:
		c.Float(x)
	case time.Time:
		c.Time(x)
	default:
		c.pgx(c.next(), v)
	}
}

// pgx appends v, length first, as pgx encodes it as type oid.
func (c *copyWriter) pgx(oid uint32, v any) {
	if c.err != nil {
		return
	}
	at := len(c.buf)
	out, err := c.m.Encode(oid, pgtype.BinaryFormatCode, v, be.AppendUint32(c.buf, 0))
	switch {
	case err != nil:
		c.err = err
	case out == nil:
		c.buf = be.AppendUint32(c.buf[:at], 0xffffffff)
	default:
		be.PutUint32(out[at:], uint32(len(out)-at-4))
		c.buf = out
	}
}

// be is the byte order of PostgreSQL's binary forms.
var be = binary.BigEndian

// pgEpochMicros is where PostgreSQL's timestamps count microseconds from,
// 2000-01-01 UTC, in microseconds since the Unix epoch.
var pgEpochMicros = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

// appendNumeric appends f, length first, as numeric's binary form: its
// shortest decimal text in base-10000 digits around the point, with as
// many decimals as that text has (the column's scale then rounds it, as
// from text).
func appendNumeric(buf []byte, f float64) []byte {
	var sign uint16
	if f < 0 {
		sign, f = 0x4000, -f
	}
	// Money and rates have at most four decimals: their digits come from
	// the integer of ten-thousandths, without the float's text (which took
	// a tenth of a build's client CPU). Below 1e11 a float's spacing is
	// under a ten-thousandth, so when c/10^4 is f it is f's shortest text.
	if c := math.Round(f * 1e4); f < 1e11 && c/1e4 == f {
		return appendTenThousandths(buf, uint64(c), sign)
	}
	return appendNumericText(buf, f, sign)
}

// appendNumericText is appendNumeric of f ≥ 0 with sign, from its text.
func appendNumericText(buf []byte, f float64, sign uint16) []byte {
	var text [32]byte
	s := strconv.AppendFloat(text[:0], f, 'f', -1, 64)
	whole, frac := s, s[len(s):]
	if i := strings.IndexByte(string(s), '.'); i >= 0 {
		whole, frac = s[:i], s[i+1:]
	}
	// Digits of four decimal places each, the whole part padded on the
	// left and the fraction on the right.
	var digits [48]uint16
	n, d, k := 0, 0, (4-len(whole)%4)%4
	weight := (len(whole)+k)/4 - 1
	for _, part := range [2][]byte{whole, frac} {
		for _, c := range part {
			d, k = d*10+int(c-'0'), k+1
			if k == 4 {
				digits[n], n, d, k = uint16(d), n+1, 0, 0
			}
		}
	}
	if k > 0 {
		for ; k < 4; k++ {
			d *= 10
		}
		digits[n], n = uint16(d), n+1
	}
	return appendNumericDigits(buf, digits[:n], weight, sign, len(frac))
}

// appendTenThousandths appends c/10^4 as appendNumeric would: its
// base-10000 digits are c's, the last one after the point, and its
// decimals those of c%10^4 without trailing zeros.
func appendTenThousandths(buf []byte, c uint64, sign uint16) []byte {
	dscale := 0
	if frac := c % 10000; frac != 0 {
		dscale = 4
		for ; frac%10 == 0; frac /= 10 {
			dscale--
		}
	}
	var groups [8]uint16 // least significant first: 10^-4, 10^0, 10^4, ...
	n := 0
	for ; c > 0; c /= 10000 {
		groups[n], n = uint16(c%10000), n+1
	}
	var digits [8]uint16
	for i := range n {
		digits[i] = groups[n-1-i]
	}
	return appendNumericDigits(buf, digits[:n], n-2, sign, dscale)
}

// appendNumericDigits appends numeric's binary form, length first, of
// base-10000 digits whose first has weight weight, dropping leading and
// trailing zero digits; no digits left is zero.
func appendNumericDigits(buf []byte, digits []uint16, weight int, sign uint16, dscale int) []byte {
	for len(digits) > 0 && digits[0] == 0 {
		digits, weight = digits[1:], weight-1
	}
	for len(digits) > 0 && digits[len(digits)-1] == 0 {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		weight, sign = 0, 0
	}
	be := binary.BigEndian
	buf = be.AppendUint32(buf, uint32(8+2*len(digits)))
	buf = be.AppendUint16(buf, uint16(len(digits)))
	buf = be.AppendUint16(buf, uint16(int16(weight)))
	buf = be.AppendUint16(buf, sign)
	buf = be.AppendUint16(buf, uint16(dscale))
	for _, dg := range digits {
		buf = be.AppendUint16(buf, dg)
	}
	return buf
}
