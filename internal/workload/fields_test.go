package workload

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// TestFieldFuncValues: a FieldFunc source read through Next and Values
// holds each value as the type its method names, and a string written from
// a buffer the generator reuses stays as it was, row after row.
func TestFieldFuncValues(t *testing.T) {
	at := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	r := NewRand(9, 10)
	var buf []byte
	i := 0
	src := FieldFunc(6, func(w dbtarget.FieldWriter) bool {
		if i == 5000 {
			return false
		}
		i++
		w.Int(i)
		w.Float(float64(i) / 4)
		buf = r.AppendAString(buf[:0], 0, 40)
		w.TextBytes(buf)
		w.Text("OE")
		w.Time(at)
		w.Null()
		return true
	})
	var held, copies []string
	for n := 1; src.Next(); n++ {
		v, err := src.Values()
		if err != nil {
			t.Fatal(err)
		}
		s := v[2].(string)
		if v[0] != n || v[1] != float64(n)/4 || s != string(buf) || v[3] != "OE" || v[4] != at || v[5] != nil {
			t.Fatalf("row %d: %v", n, v)
		}
		held, copies = append(held, s), append(copies, strings.Clone(s))
	}
	if err := src.Err(); err != nil || len(held) != 5000 {
		t.Fatalf("%d rows, err %v", len(held), err)
	}
	for k := range held {
		if held[k] != copies[k] {
			t.Fatalf("string of row %d changed after later rows", k+1)
		}
	}
}

// TestFieldFuncWidth: a row of other than its columns' values ends a
// FieldFunc source read through Values with an error.
func TestFieldFuncWidth(t *testing.T) {
	for _, n := range []int{1, 3} {
		src := FieldFunc(2, func(w dbtarget.FieldWriter) bool {
			for range n {
				w.Int(1)
			}
			return true
		})
		if src.Next() || src.Err() == nil {
			t.Errorf("a row of %d values for 2 columns read without an error", n)
		}
	}
}

// TestCountRows: a counted FieldSource is still one, and its rows are
// counted however it is read; a plain source is counted and stays plain.
func TestCountRows(t *testing.T) {
	rows := func() func(dbtarget.FieldWriter) bool {
		i := 0
		return func(w dbtarget.FieldWriter) bool {
			i++
			w.Int(i)
			return i <= 3000
		}
	}
	var n atomic.Int64
	fs, ok := countRows(FieldFunc(1, rows()), &n).(dbtarget.FieldSource)
	if !ok {
		t.Fatal("a counted FieldSource is not a FieldSource")
	}
	b := &boxer{vals: make([]any, 1)}
	for fs.WriteRow(b) {
	}
	src := countRows(FieldFunc(1, rows()), &n)
	for src.Next() {
	}
	if n.Load() != 6000 {
		t.Errorf("counted %d rows, want 6000", n.Load())
	}
	plain := countRows(RowFunc(1, func([]any) bool { return false }), &n)
	if _, ok := plain.(dbtarget.FieldSource); ok {
		t.Error("a counted plain source became a FieldSource")
	}
}
