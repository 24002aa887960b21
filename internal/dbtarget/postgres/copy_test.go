//go:build unix

package postgres

import (
	"bytes"
	"strings"
	"testing"
	"time"

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
