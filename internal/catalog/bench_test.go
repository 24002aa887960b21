package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/catalog/catalogtest"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

// benchRuns is how many runs the catalogue of the benchmarks holds: a
// team's year of nightly sweeps.
const benchRuns = 10_000

var benchCatalogs sync.Map // backend name → *catalog.Catalog

// benchCatalog is a catalogue of benchRuns real (small) tproc-c documents
// on backend, made once per test binary: four setups by vus, each run an
// hour after the one before, its throughput moved 10% at a third of the
// way.
func benchCatalog(b *testing.B, backend string) *catalog.Catalog {
	if c, ok := benchCatalogs.Load(backend); ok {
		return c.(*catalog.Catalog)
	}
	url := "sqlite:" + filepath.Join(b.TempDir(), "bench.db")
	// DBRIG_BENCH_CATALOG keeps the SQLite catalogue for the next run,
	// which then times its queries without cataloguing again.
	if keep := os.Getenv("DBRIG_BENCH_CATALOG"); keep != "" && backend == "SQLite" {
		url = "sqlite:" + keep
	}
	if backend == "Postgres" {
		url = pgtest.NewDB(b)
	}
	ctx := context.Background()
	c, err := catalog.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	if n, err := c.Count(ctx, catalog.Filter{}); err != nil || n >= benchRuns {
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d runs already catalogued in %s", backend, n, url)
		benchCatalogs.Store(backend, c)
		return c
	}
	tpl := catalogtest.TemplateFrom(b, "pooled-run.json")
	start := time.Now()
	for i := range benchRuns {
		f := 1.0
		if i > benchRuns/3 {
			f = 0.9
		}
		doc := catalogtest.Scaled(b, tpl, f*(1+0.01*float64(i%7-3)), i, 4*(1+i%4))
		if _, _, err := c.Add(ctx, "", doc, catalog.Meta{Tags: []string{"nightly"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: %d runs catalogued in %s", backend, benchRuns, time.Since(start).Round(time.Second))
	benchCatalogs.Store(backend, c)
	return c
}

func cond(b *testing.B, s string) catalog.Cond {
	c, err := catalog.ParseCond(s)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkCatalog times, on 10,000 catalogued runs, what dbrig runs,
// history and serve ask: the newest 50; the newest 50 of one setup, and
// every run of it (2,500), filtered by a config key and a metric; one setup's history with its
// change points; the whole catalogue's history of a metric; and the
// ingest of one document with telemetry (158 KB).
func BenchmarkCatalog(b *testing.B) {
	for _, backend := range []string{"SQLite", "Postgres"} {
		b.Run(backend, func(b *testing.B) {
			c := benchCatalog(b, backend)
			ctx := context.Background()
			b.Run("list-newest-50", func(b *testing.B) {
				for b.Loop() {
					if es, err := c.List(ctx, catalog.Filter{Limit: 50}); err != nil || len(es) != 50 {
						b.Fatal(len(es), err)
					}
				}
			})
			b.Run("filter-newest-50", func(b *testing.B) {
				f := catalog.Filter{Workload: "tproc-c", Where: []catalog.Cond{cond(b, "config.vus=8"), cond(b, "metric.nopm>0")}, Limit: 50}
				for b.Loop() {
					if es, err := c.List(ctx, f); err != nil || len(es) != 50 {
						b.Fatal(len(es), err)
					}
				}
			})
			b.Run("filter-2500", func(b *testing.B) {
				f := catalog.Filter{Workload: "tproc-c", Where: []catalog.Cond{cond(b, "config.vus=8"), cond(b, "metric.nopm>0")}}
				for b.Loop() {
					if es, err := c.List(ctx, f); err != nil || len(es) != benchRuns/4 {
						b.Fatal(len(es), err)
					}
				}
			})
			b.Run("history-setup-changes", func(b *testing.B) {
				f := catalog.Filter{Where: []catalog.Cond{cond(b, "config.vus=8")}}
				for b.Loop() {
					t, err := c.TrendOf(ctx, "nopm", f, "")
					if err != nil || len(t.Series) != 1 || len(t.Series[0].Samples) != benchRuns/4 || len(t.Series[0].Changes) == 0 {
						b.Fatal(err)
					}
				}
			})
			b.Run("history-all-by-vus", func(b *testing.B) {
				// All of them: the benchmark's, and a kept catalogue's ingests.
				all, err := c.Count(ctx, catalog.Filter{})
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					s, _, err := c.History(ctx, "nopm", catalog.Filter{}, "vus")
					if err != nil || len(s) != all {
						b.Fatal(len(s), err)
					}
				}
			})
			b.Run("ingest", func(b *testing.B) {
				doc, err := os.ReadFile("../report/testdata/telemetry-run.json")
				if err != nil {
					b.Fatal(err)
				}
				const stamp = "2026-11-22T03:24:23.077810165Z"
				if !bytes.Contains(doc, []byte(stamp)) {
					b.Fatal("the document's start time is not " + stamp)
				}
				// A document of its own each time: another start, after the
				// catalogue's runs, and another in each process (a kept
				// catalogue has the last one's).
				i, offset := 0, time.Duration(time.Now().UnixNano()%int64(time.Hour))
				for b.Loop() {
					i++
					at := catalogtest.Start.Add(time.Duration(benchRuns+i)*time.Hour + offset).Format(time.RFC3339Nano)
					d := bytes.Replace(doc, []byte(stamp), []byte(at), 1)
					if _, added, err := c.Add(ctx, "", d, catalog.Meta{}); err != nil || !added {
						b.Fatal(fmt.Sprint(added), err)
					}
				}
			})
		})
	}
}
