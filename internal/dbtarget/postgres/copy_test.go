//go:build unix

package postgres

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestLoadEncodes: Load's own binary encoding stores what the values say,
// as the server reads them back in text: integers, strings of each kind,
// numeric from float64 at the column's scale (zero, rounding, negatives,
// fractions under a digit group), timestamps, NULLs, and a type it leaves
// to pgx (bool).
func TestLoadEncodes(t *testing.T) {
	ctx, _, s := newSession(t)
	if _, err := s.Exec(ctx, `CREATE TABLE "Mixed" (i int, b bigint, t text, v varchar(10), c char(3),
		m numeric(12,2), r numeric(4,4), ts timestamp, ok bool)`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 1, 2, 3, 456789000, time.UTC)
	rows := [][]any{
		{1, 5000000000, "text", "varchar", "abc", 1234.56, 0.15, at, true},
		{-7, -1, "", "", "x", 0.0, 0.0001, at.Add(-30 * 365 * 24 * time.Hour), false},
		{0, 0, "ö", "a'b", "ab", -10.0, 0.2, nil, nil},
		{nil, nil, nil, nil, nil, 12345678.9, 0.12345, at, true},
		{2, 2, "x", "y", "z", 0.005, 0.0, at, true},
	}
	want := []string{
		"1|5000000000|text|varchar|abc|1234.56|0.1500|2026-11-26 01:02:03.456789|true",
		"-7|-1|||x  |0.00|0.0001|1996-12-03 01:02:03.456789|false",
		"0|0|ö|a'b|ab |-10.00|0.2000|-|-",
		"-|-|-|-|-|12345678.90|0.1235|2026-11-26 01:02:03.456789|true",
		"2|2|x|y|z  |0.01|0.0000|2026-11-26 01:02:03.456789|true",
	}
	i := 0
	src := workload.RowFunc(9, func(v []any) bool {
		if i == len(rows) {
			return false
		}
		copy(v, rows[i])
		i++
		return true
	})
	n, err := s.Load(ctx, "Mixed", []string{"i", "b", "t", "v", "c", "m", "r", "ts", "ok"}, src)
	if err != nil || n != int64(len(rows)) {
		t.Fatalf("loaded %d rows, err %v", n, err)
	}
	got, err := s.Query(ctx, `SELECT concat_ws('|', coalesce(i::text, '-'), coalesce(b::text, '-'), coalesce(t, '-'),
		coalesce(v, '-'), coalesce(c::text || repeat(' ', 3 - length(c)), '-'), m, r, coalesce(ts::text, '-'),
		coalesce(ok::text, '-')) FROM "Mixed" ORDER BY m`)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	var lines []string
	for got.Next() {
		var line string
		if err := got.Scan(&line); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	// Ordered by m: -10, 0, 0.01, 1234.56, 12345678.90.
	order := []int{2, 1, 4, 0, 3}
	for k, j := range order {
		if k >= len(lines) || lines[k] != want[j] {
			t.Errorf("stored:\n%s\nwant row %d:\n%s", strings.Join(lines, "\n"), j, want[j])
			break
		}
	}

	// A value the column cannot take fails the load in one error.
	bad := workload.RowFunc(1, func(v []any) bool { v[0] = "not a number"; return true })
	if _, err := s.Load(ctx, "Mixed", []string{"i"}, bad); err == nil {
		t.Error("a string into an int column loaded")
	}
}

// TestNumericWithoutText: money and rates take the path that skips the
// float's text, and give the bytes the text gives: whole and fractional
// amounts, trailing zeros, zero, signs, and the largest values it takes.
func TestNumericWithoutText(t *testing.T) {
	r := workload.NewRand(1, 2)
	vals := []float64{0, 1, 10, 0.1, 0.15, 0.0001, 0.2, 50000, 300000, -10, 1234.56, 12345678.9, 99999999999.9999, 1e10}
	for range 20000 {
		vals = append(vals, r.Money(-999999, 999999), float64(r.Int(0, 5000))/10000, float64(r.Int(0, 1e9))/100)
	}
	for _, f := range vals {
		sign, abs := uint16(0), f
		if f < 0 {
			sign, abs = 0x4000, -f
		}
		if got, want := appendNumeric(nil, f), appendNumericText(nil, abs, sign); !bytes.Equal(got, want) {
			t.Fatalf("numeric %v: % x, from its text % x", f, got, want)
		}
	}
}

// TestFieldsEncodeAsPgx: every value a row can hold, in every column type
// it goes to, encodes the same three ways: written through a FieldWriter
// method (a FieldSource's row), through the slice of values of a plain
// RowSource, and by pgx's own encoding of that value (numeric zero aside:
// pgx gives it weight -1, dbrig 0, as PostgreSQL does; both read as 0). So
// a load sends the same bytes for a generator's rows either way, and what
// pgx's CopyFrom would have sent.
func TestFieldsEncodeAsPgx(t *testing.T) {
	at := time.Date(2026, 11, 26, 1, 2, 3, 456789000, time.UTC)
	r := workload.NewRand(3, 4)
	type field struct {
		oid uint32
		v   any
	}
	fields := []field{
		{pgtype.Int4OID, 0}, {pgtype.Int4OID, -7}, {pgtype.Int4OID, 2147483647}, {pgtype.Int8OID, 5000000000},
		{pgtype.Int8OID, -1}, {pgtype.Float8OID, 1}, {pgtype.TextOID, ""}, {pgtype.TextOID, "ö"},
		{pgtype.VarcharOID, "a'b"}, {pgtype.BPCharOID, "OE"}, {pgtype.NumericOID, 0.0}, {pgtype.NumericOID, -10.0},
		{pgtype.NumericOID, 300000.0}, {pgtype.NumericOID, 0.0001}, {pgtype.NumericOID, 12345678.9},
		{pgtype.NumericOID, 1e-7}, {pgtype.NumericOID, 1e15}, {pgtype.NumericOID, 1.0 / 3},
		{pgtype.NumericOID, math.NaN()}, {pgtype.Float8OID, 0.25}, {pgtype.TimestampOID, at},
		{pgtype.TimestampOID, at.Add(-30 * 365 * 24 * time.Hour)}, {pgtype.TimestampOID, time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
		{pgtype.TimestamptzOID, at}, {pgtype.TimestampOID, at.In(time.FixedZone("X", 3600))},
		{pgtype.Int4OID, nil}, {pgtype.NumericOID, nil}, {pgtype.TextOID, nil}, {pgtype.BoolOID, true},
	}
	for range 2000 {
		fields = append(fields, field{pgtype.NumericOID, r.Money(-999999, 999999)},
			field{pgtype.NumericOID, float64(r.Int(0, 5000)) / 10000}, field{pgtype.VarcharOID, string(r.AppendAString(nil, 0, 500))},
			field{pgtype.Int4OID, r.Int(-1e9, 1e9)})
	}
	m := pgtype.NewMap()
	for _, f := range fields {
		left := 1
		generic := encodeOne(t, m, f.oid, workload.RowFunc(1, func(v []any) bool { v[0] = f.v; left--; return left >= 0 }))
		typed := generic // a bool has no method
		if write := writeOnce(f.v); write != nil {
			typed = encodeOne(t, m, f.oid, workload.FieldFunc(1, write))
		}
		want, err := m.Encode(f.oid, pgtype.BinaryFormatCode, f.v, make([]byte, 4, 64))
		switch {
		case err != nil:
			t.Fatalf("pgx: %T %v as %d: %v", f.v, f.v, f.oid, err)
		case f.v == nil:
			want = []byte{0xff, 0xff, 0xff, 0xff}
		case f.v == 0.0:
			want = []byte{0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0} // no digits, weight 0, positive, no decimals
		default:
			binary.BigEndian.PutUint32(want, uint32(len(want)-4))
		}
		if !bytes.Equal(typed, want) || !bytes.Equal(generic, want) {
			t.Errorf("%T %v as %d: written % x, from values % x, pgx % x", f.v, f.v, f.oid, typed, generic, want)
		}
	}
}

// writeOnce is a row function of one row holding v, written through the
// FieldWriter method for its type; nil for a type with none.
func writeOnce(v any) func(dbtarget.FieldWriter) bool {
	var write func(w dbtarget.FieldWriter)
	switch x := v.(type) {
	case nil:
		write = func(w dbtarget.FieldWriter) { w.Null() }
	case int:
		write = func(w dbtarget.FieldWriter) { w.Int(x) }
	case float64:
		write = func(w dbtarget.FieldWriter) { w.Float(x) }
	case string:
		write = func(w dbtarget.FieldWriter) { w.TextBytes([]byte(x)) }
	case time.Time:
		write = func(w dbtarget.FieldWriter) { w.Time(x) }
	default:
		return nil
	}
	done := false
	return func(w dbtarget.FieldWriter) bool {
		if done {
			return false
		}
		done = true
		write(w)
		return true
	}
}

// encodeOne is the encoding of the one value of src's one row of one
// column of type oid, without the stream's header, row head and trailer.
func encodeOne(t *testing.T, m *pgtype.Map, oid uint32, src dbtarget.RowSource) []byte {
	t.Helper()
	var out bytes.Buffer
	var rows int64
	if err := encodeRows(&out, m, []uint32{oid}, src, &rows); err != nil || rows != 1 {
		t.Fatalf("encoded %d rows: %v", rows, err)
	}
	b := out.Bytes()
	return b[19+2 : len(b)-2]
}

// TestRowOfWrongWidth: a row of fewer or more values than columns stops
// the stream with an error, from a FieldSource as from values.
func TestRowOfWrongWidth(t *testing.T) {
	oids := []uint32{pgtype.Int4OID, pgtype.Int4OID}
	for _, n := range []int{1, 3} {
		var rows int64
		src := workload.FieldFunc(n, func(w dbtarget.FieldWriter) bool {
			for range n {
				w.Int(1)
			}
			return true
		})
		if err := encodeRows(io.Discard, pgtype.NewMap(), oids, src, &rows); err == nil || rows != 0 {
			t.Errorf("rows of %d values for 2 columns: %d encoded, err %v", n, rows, err)
		}
		if err := encodeRows(io.Discard, pgtype.NewMap(), oids, workload.RowFunc(n, func([]any) bool { return true }), &rows); err == nil || rows != 0 {
			t.Errorf("values of %d for 2 columns: %d encoded, err %v", n, rows, err)
		}
	}
}

// TestLoadPanics: a row generator that panics, as a bug in a workload's
// code would, on the goroutine that encodes the COPY stream, does not crash
// the process: the load returns the panic as an *exitcode.Panic.
func TestLoadPanics(t *testing.T) {
	ctx, _, s := newSession(t)
	if _, err := s.Exec(ctx, `CREATE TABLE p (i int)`); err != nil {
		t.Fatal(err)
	}
	n := 0
	src := workload.RowFunc(1, func(v []any) bool {
		if n++; n == 3 {
			panic("generator bug")
		}
		v[0] = n
		return true
	})
	_, err := s.Load(ctx, "p", []string{"i"}, src)
	var p *exitcode.Panic
	if !errors.As(err, &p) || fmt.Sprint(p.Value) != "generator bug" {
		t.Fatalf("Load: %v, want the generator's panic", err)
	}
}
