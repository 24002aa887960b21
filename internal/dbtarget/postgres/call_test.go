//go:build unix

package postgres

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestCallEncodesAsPgx: the arguments a call encodes itself are the
// bytes and formats pgx would send; those it does not take it leaves to
// pgx.
func TestCallEncodesAsPgx(t *testing.T) {
	zone := time.FixedZone("east", 5*3600+1800)
	at := time.Date(2026, 11, 26, 3, 4, 5, 678912345, zone)
	for _, tc := range []struct {
		name string
		oids []uint32
		args []any
		pgx  bool // left to pgx
	}{
		{"new-order", []uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4ArrayOID, pgtype.Int4ArrayOID, pgtype.Int4ArrayOID, pgtype.TimestampOID},
			[]any{1, 10, 3000, []int32{5, 100000, -7}, []int32{1, 1, 2}, []int32{10, 1, 5}, at}, false},
		{"payment", []uint32{pgtype.Int4OID, pgtype.Int8OID, pgtype.BoolOID, pgtype.BoolOID, pgtype.VarcharOID, pgtype.TextOID, pgtype.BPCharOID, pgtype.Float8OID, pgtype.TimestamptzOID},
			[]any{-2, math.MaxInt64, true, false, "BARBARABLE", "", "é", 1234.56, at}, false},
		{"utc", []uint32{pgtype.TimestampOID, pgtype.TimestamptzOID}, []any{at.UTC(), time.Unix(0, 0)}, false},
		{"int4 out of range", []uint32{pgtype.Int4OID}, []any{math.MaxInt32 + 1}, true},
		{"empty array", []uint32{pgtype.Int4ArrayOID}, []any{[]int32{}}, true},
		{"numeric", []uint32{pgtype.NumericOID}, []any{3}, true},
		{"string to int", []uint32{pgtype.Int4OID}, []any{"3"}, true},
		{"pointer", []uint32{pgtype.Int4OID}, []any{new(int)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c call
			values, formats := c.encode(tc.oids, tc.args)
			if tc.pgx {
				if values != nil {
					t.Fatalf("encoded %q; want it left to pgx", values)
				}
				return
			}
			var eqb pgx.ExtendedQueryBuilder
			if err := eqb.Build(pgtype.NewMap(), &pgconn.StatementDescription{ParamOIDs: tc.oids}, tc.args); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(formats, eqb.ParamFormats) {
				t.Errorf("formats %v; pgx's %v", formats, eqb.ParamFormats)
			}
			if !slices.EqualFunc(values, eqb.ParamValues, func(a, b []byte) bool { return (a == nil) == (b == nil) && string(a) == string(b) }) {
				t.Errorf("values %q; pgx's %q", values, eqb.ParamValues)
			}
		})
	}
}

// TestCallReadsAsPgx: a statement the session prepared, called with
// arguments, reads its row as pgx's QueryRow would: the same values, the
// same errors, no row pgx.ErrNoRows, and the session goes on after each.
func TestCallReadsAsPgx(t *testing.T) {
	ctx, _, s := newSession(t)
	const sql = `SELECT $1::int, $2::int8, $3::float8, $4::numeric, $5::text, cardinality($6::int[]), $7::timestamp
		FROM generate_series(1, $8::int)`
	at := time.Date(2026, 11, 26, 3, 4, 5, 678912000, time.UTC)
	var i4, i8, n int
	var f8, num float64
	var text string
	var ts time.Time
	if err := s.QueryRow(ctx, sql, -5, 1<<40, 2.5, 0.1, "x", []int32{1, 2, 3}, at, 2).Scan(&i4, &i8, &f8, &num, &text, &n, &ts); err != nil {
		t.Fatal(err)
	}
	if i4 != -5 || i8 != 1<<40 || f8 != 2.5 || num != 0.1 || text != "x" || n != 3 || !ts.Equal(at) {
		t.Errorf("read %v %v %v %v %q %v %v", i4, i8, f8, num, text, n, ts)
	}
	// Into any, as pgx reads them.
	sinks := make([]any, 7)
	dest := make([]any, 7)
	for i := range sinks {
		dest[i] = &sinks[i]
	}
	if err := s.QueryRow(ctx, sql, 7, 1, 2.5, 0.1, "x", []int32{1}, at, 1).Scan(dest...); err != nil {
		t.Fatal(err)
	}
	pgxRow := make([]any, 7)
	for i := range pgxRow {
		dest[i] = &pgxRow[i]
	}
	// Without arguments, the query goes to pgx.
	if err := s.QueryRow(ctx, "SELECT 7::int, 1::int8, 2.5::float8, 0.1::numeric, 'x'::text, 1, '2026-11-26 03:04:05.678912'::timestamp").Scan(dest...); err != nil {
		t.Fatal(err)
	}
	if sinks[0] != int32(7) || sinks[1] != int64(1) || sinks[2] != 2.5 {
		t.Errorf("into any: %#v", sinks)
	}
	for i := range sinks {
		if fmt.Sprintf("%T %#v", sinks[i], sinks[i]) != fmt.Sprintf("%T %#v", pgxRow[i], pgxRow[i]) {
			t.Errorf("column %d into any: %T %#v; pgx's %T %#v", i, sinks[i], sinks[i], pgxRow[i], pgxRow[i])
		}
	}
	if err := s.QueryRow(ctx, sql, 1, 1, 2.5, 0.1, "x", []int32{1}, at, 0).Scan(&i4, &i8, &f8, &num, &text, &n, &ts); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("no row: %v; want pgx.ErrNoRows", err)
	}
	if err := s.QueryRow(ctx, sql, 1, 1, 2.5, 0.1, "x", []int32{1}, at, 1).Scan(&i4); err == nil {
		t.Error("too few destinations: no error")
	}
	var null *int
	if err := s.QueryRow(ctx, "SELECT NULLIF($1::int, 1)", 1).Scan(&i4); err == nil {
		t.Error("NULL into *int: no error")
	}
	if err := s.QueryRow(ctx, "SELECT NULLIF($1::int, 1)", 1).Scan(&null); err != nil || null != nil {
		t.Errorf("NULL into **int: %v, %v", null, err)
	}
	err := s.QueryRow(ctx, "SELECT 1 / $1::int", 0).Scan(&i4)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22012" {
		t.Errorf("division by zero: %v", err)
	}
	if err := s.QueryRow(ctx, "SELECT $1::int + 1", 41).Scan(&i4); err != nil || i4 != 42 {
		t.Errorf("after the errors: %v, %v", i4, err)
	}
}
