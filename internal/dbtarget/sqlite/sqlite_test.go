package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// testRows yields n rows of (i, "row i", i/2).
type testRows struct {
	n, i int
	v    []any
}

func (r *testRows) Next() bool { r.i++; return r.i <= r.n }
func (r *testRows) Values() ([]any, error) {
	r.v = append(r.v[:0], r.i, "row", float64(r.i)/2)
	return r.v, nil
}
func (r *testRows) Err() error { return nil }

func TestSQLiteOpenLoadQuery(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	if _, err := OpenURL(ctx, Prefix+path, false); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("opening a missing file without create: err = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("a failed open left a file behind")
	}
	// Nor does one that may create the file make its directory.
	sub := filepath.Join(filepath.Dir(path), "sub")
	if _, err := OpenURL(ctx, Prefix+filepath.Join(sub, "x.db"), true); err == nil || !strings.Contains(err.Error(), "no directory "+sub) {
		t.Fatalf("creating a file in a missing directory: err = %v", err)
	}
	if _, err := os.Stat(sub); !os.IsNotExist(err) {
		t.Fatal("a failed open left a directory behind")
	}
	tg, err := OpenURL(ctx, Prefix+path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.Kind() != "sqlite" || tg.Dialect() != Dialect || tg.HasRoutines() || tg.ParallelWrites() {
		t.Errorf("kind %q dialect %v routines %v parallel %v", tg.Kind(), tg.Dialect(), tg.HasRoutines(), tg.ParallelWrites())
	}
	if v, err := tg.Version(ctx); err != nil || !strings.HasPrefix(v, "3.") {
		t.Errorf("version %q, %v", v, err)
	}
	s, err := tg.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Exec(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, half REAL)"); err != nil {
		t.Fatal(err)
	}
	// Not a multiple of the batch (64 rows) or the transaction size (50000
	// rows), so the tails load too.
	const n = 50000 + 3*64 + 5
	got, err := s.Load(ctx, "t", []string{"id", "name", "half"}, &testRows{n: n})
	if err != nil || got != n {
		t.Fatalf("Load = %d, %v; want %d", got, err, n)
	}
	var count int
	var sum float64
	if err := s.QueryRow(ctx, "SELECT count(*), sum(half) FROM t WHERE name = $1", "row").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != n || sum != float64(n)*float64(n+1)/4 {
		t.Errorf("count %d sum %v after load", count, sum)
	}
	rs, err := s.Query(ctx, "SELECT id FROM t WHERE id <= $1 ORDER BY id", 3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for rs.Next() {
		var id int
		rs.Scan(&id)
		ids = append(ids, id)
	}
	rs.Close()
	if rs.Err() != nil || len(ids) != 3 || ids[2] != 3 {
		t.Errorf("query rows %v, %v", ids, rs.Err())
	}
	if _, _, err := tg.Xacts(ctx); err != nil {
		t.Error(err)
	}
}

// TestSQLiteBusyIsRetryable holds the write lock in one session so that
// another's write fails with SQLITE_BUSY once its timeout passes, which the
// driver must retry rather than count.
func TestSQLiteBusyIsRetryable(t *testing.T) {
	ctx := context.Background()
	tg, err := OpenURL(ctx, Prefix+filepath.Join(t.TempDir(), "b.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	a, _ := tg.Session(ctx)
	b, _ := tg.Session(ctx)
	defer a.Close()
	defer b.Close()
	if _, err := a.Exec(ctx, "CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec(ctx, "PRAGMA busy_timeout = 50"); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = b.Exec(ctx, "INSERT INTO t VALUES (1)")
	if err == nil {
		t.Fatal("a second writer got in while the first held the lock")
	}
	if c := tg.Classify(err); c != dbtarget.ErrRetry {
		t.Errorf("Classify(%v) = %v, want ErrRetry", err, c)
	}
	if time.Since(began) > 5*time.Second {
		t.Error("busy timeout not applied")
	}
	if c := tg.Classify(os.ErrNotExist); c != dbtarget.ErrOther {
		t.Errorf("Classify(other) = %v, want ErrOther", c)
	}
	a.Exec(ctx, "ROLLBACK")
}
