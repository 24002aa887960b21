package mariadb_test

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget/mariadb"
)

// BenchmarkLoad compares LOAD DATA with the shared multi-row INSERTs on a
// million rows of TestLoad's table, the figures behind Open's choice:
//
//	go test -run - -bench Load -benchtime 1x ./internal/dbtarget/mariadb/
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	tg := open(b)
	for _, mode := range []string{"load-data", "insert"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "insert" {
				defer mariadb.UseInserts(tg)()
			}
			for range b.N {
				b.StopTimer()
				s := session(b, tg)
				exec(b, s, "CREATE OR REPLACE TABLE lt (id INT PRIMARY KEY, amount DECIMAL(12,2), note VARCHAR(100), at DATETIME(6), flag BOOLEAN)")
				b.StartTimer()
				n, err := s.Load(ctx, "lt", []string{"id", "amount", "note", "at", "flag"}, &rows{n: 1_000_000, at: time.Now()})
				b.StopTimer()
				if err != nil || n != 1_000_000 {
					b.Fatalf("loaded %d rows: %v", n, err)
				}
			}
			b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
