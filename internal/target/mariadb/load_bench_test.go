package mariadb

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server/mariadb/mariatest"
)

// benchRows is a million-row table's worth of plain rows.
type benchRows struct {
	i, n int
	at   time.Time
	vals []any
}

func (r *benchRows) Next() bool { r.i++; return r.i <= r.n }
func (r *benchRows) Values() ([]any, error) {
	r.vals = append(r.vals[:0], r.i, r.i%1000, "abcdefghijklmnopqrstuvwx", float64(r.i%10000)/100, r.at,
		"ORIGINAL payload of fifty characters, more or less")
	return r.vals, nil
}
func (r *benchRows) Err() error { return nil }

// BenchmarkLoad compares LOAD DATA with the shared multi-row INSERTs on a
// million rows, the figures behind Open's choice:
//
//	go test -run - -bench Load -benchtime 1x ./internal/target/mariadb/
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	tg, err := Open(ctx, mariatest.NewDB(b))
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	t := tg.(*Target)
	for _, mode := range []string{"load-data", "insert"} {
		b.Run(mode, func(b *testing.B) {
			saved := t.db.Bulk
			if mode == "insert" {
				t.db.Bulk = nil
			}
			defer func() { t.db.Bulk = saved }()
			for range b.N {
				b.StopTimer()
				if _, err := t.db.SQL.ExecContext(ctx, "CREATE OR REPLACE TABLE lt (a INT PRIMARY KEY, b INT, c VARCHAR(24), d DECIMAL(6,2), e DATETIME, f VARCHAR(50))"); err != nil {
					b.Fatal(err)
				}
				s, err := tg.Session(ctx)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				n, err := s.Load(ctx, "lt", []string{"a", "b", "c", "d", "e", "f"}, &benchRows{n: 1_000_000, at: time.Now()})
				b.StopTimer()
				s.Close()
				if err != nil || n != 1_000_000 {
					b.Fatalf("loaded %d rows: %v", n, err)
				}
			}
			b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
