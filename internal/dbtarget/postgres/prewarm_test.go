//go:build unix

package postgres

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

func execAll(t *testing.T, url string, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	for _, sql := range stmts {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// fillDB makes tables of about rows*90 bytes, with an index, a table in a
// schema of its own and out-of-line (TOAST) values, so that every kind of
// relation Prewarm must reach is there.
func fillDB(t *testing.T, url string, rows int) {
	t.Helper()
	execAll(t, url,
		`CREATE TABLE t1 (id int PRIMARY KEY, s text)`,
		`INSERT INTO t1 SELECT g, md5(g::text) FROM generate_series(1, `+strconv.Itoa(rows)+`) g`,
		`CREATE SCHEMA bench`,
		`CREATE TABLE bench.t2 AS SELECT g AS id, md5((-g)::text) AS s FROM generate_series(1, `+strconv.Itoa(rows/4)+`) g`,
		`CREATE TABLE t3 (id int, body text)`,
		// EXTERNAL: out of line and uncompressed, so the TOAST table is real.
		`ALTER TABLE t3 ALTER COLUMN body SET STORAGE EXTERNAL`,
		`INSERT INTO t3 SELECT g, repeat(md5(g::text), 128) FROM generate_series(1, `+strconv.Itoa(rows/500)+`) g`,
		`VACUUM ANALYZE`,
	)
}

// TestPrewarm: with shared buffers larger than the data, a fresh server
// holds almost none of it, and after Prewarm nearly all of it; with shared
// buffers a quarter of the data, the fraction stays low, honestly.
func TestPrewarm(t *testing.T) {
	s := pgtest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	restart := func(sb string) {
		t.Helper()
		if err := s.Stop(ctx); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		if err := s.Start(ctx, map[string]string{"shared_buffers": sb}); err != nil {
			t.Fatalf("Start with shared_buffers=%s: %v", sb, err)
		}
	}
	if err := s.Start(ctx, map[string]string{"shared_buffers": "256MB"}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	for _, db := range []string{"small", "big"} {
		if err := s.CreateDB(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	fillDB(t, s.URLFor("small"), 200_000) // about 20 MB with its index
	fillDB(t, s.URLFor("big"), 650_000)   // about 64 MB
	const blockSize = 8192
	// open reaches db on the server as it runs now: a restart ends every
	// session.
	open := func(t *testing.T, db string) *Target {
		t.Helper()
		tg, err := Open(ctx, s.URLFor(db))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tg.Close() })
		return tg.(*Target)
	}

	t.Run("fits", func(t *testing.T) {
		restart("256MB")
		small := open(t, "small")
		cold, err := small.MeasureResidency(ctx)
		if err != nil {
			t.Fatalf("MeasureResidency: %v", err)
		}
		t.Logf("after restart: %v", cold)
		mb := float64(cold.Blocks*blockSize) / (1 << 20)
		if mb < 15 || mb > 40 {
			t.Errorf("small database is %.1f MB, want about 20", mb)
		}
		if cold.Fraction > 0.2 {
			t.Errorf("fresh server already holds %.1f%% of the data", 100*cold.Fraction)
		}
		// What a sweep calls, through the generic interface.
		r, err := dbtarget.Target(small).(dbtarget.Prewarmer).Prewarm(ctx)
		if err != nil {
			t.Fatalf("Prewarm: %v", err)
		}
		t.Logf("after prewarm: %v", r)
		// t1, its key, bench.t2, t3, and each table's TOAST table and index.
		if r.Relations < 10 {
			t.Errorf("Relations = %d, want every table, index and TOAST relation (10)", r.Relations)
		}
		if r.Blocks != cold.Blocks {
			t.Errorf("Blocks %d after prewarm, %d before", r.Blocks, cold.Blocks)
		}
		if r.Fraction < 0.95 {
			t.Errorf("Fraction = %.3f, want >= 0.95", r.Fraction)
		}
		again, err := small.MeasureResidency(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if again.Resident < r.Resident*9/10 {
			t.Errorf("MeasureResidency after Prewarm: %v, Prewarm said %v", again, r)
		}
	})

	t.Run("does not fit", func(t *testing.T) {
		restart("16MB")
		r, err := open(t, "big").Prewarm(ctx)
		if err != nil {
			t.Fatalf("Prewarm: %v", err)
		}
		t.Logf("after prewarm: %v", r)
		if mb := float64(r.Blocks*blockSize) / (1 << 20); mb < 55 || mb > 110 {
			t.Errorf("big database is %.1f MB, want about 64", mb)
		}
		if r.Fraction >= 0.5 {
			t.Errorf("Fraction = %.3f with 16MB of shared buffers, want < 0.5", r.Fraction)
		}
		if max := int64(16 << 20 / blockSize); r.Resident > max {
			t.Errorf("Resident = %d blocks, more than shared buffers hold (%d)", r.Resident, max)
		}
	})
}
