//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mattn/go-sqlite3"
)

// TestMathFunctionsSQLite: the target's connections have sqrt and floor,
// whichever way this build was made; and the Go ones a connection gets
// where SQLite lacks its own give what SQLite's own give, value and type
// (compared where this build has SQLite's own, as `make test`'s has).
func TestMathFunctionsSQLite(t *testing.T) {
	tg, err := OpenURL(context.Background(), Prefix+filepath.Join(t.TempDir(), "math.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var root float64
	if err := tg.(*Target).db.SQL.QueryRow("SELECT sqrt(2.25) + floor(-0.5)").Scan(&root); err != nil || root != 0.5 {
		t.Fatalf("sqrt(2.25) + floor(-0.5) on the target: %v, %v; want 0.5", root, err)
	}

	sql.Register("sqlite3-go-math", &sqlite3.SQLiteDriver{ConnectHook: registerMath})
	goMath, err := sql.Open("sqlite3-go-math", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer goMath.Close()
	own, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if _, err := own.Exec("SELECT sqrt(1)"); err != nil {
		t.Skipf("this build's SQLite has no math functions of its own to compare with: %v", err)
	}
	for _, e := range []string{"sqrt(4)", "sqrt(2.25)", "sqrt(0)", "sqrt(-1)", "sqrt(-0.5)", "sqrt(NULL)", "sqrt('9')", "sqrt(' 6.25 ')", "sqrt('x')", "sqrt(x'01')",
		"floor(5)", "floor(-5)", "floor(2.5)", "floor(-2.5)", "floor(1e300)", "floor('3')", "floor('3.7')", "floor('1e2')", "floor('3.7x')", "floor(NULL)", "floor(x'00')"} {
		var want, got any
		if err := own.QueryRow("SELECT " + e).Scan(&want); err != nil {
			t.Fatal(e, err)
		}
		if err := goMath.QueryRow("SELECT " + e).Scan(&got); err != nil {
			t.Fatal(e, err)
		}
		if fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", want, want) {
			t.Errorf("%s: Go gives %T %v, SQLite %T %v", e, got, got, want, want)
		}
	}
}
