package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/catalog"
	"github.com/dbrig/dbrig/internal/catalog/catalogtest"
	_ "github.com/dbrig/dbrig/internal/catalog/postgres"
	_ "github.com/dbrig/dbrig/internal/catalog/sqlite"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// backends runs f on a new catalogue in each backend: an SQLite file and
// a PostgreSQL database that the test starts.
func backends(t *testing.T, f func(t *testing.T, url string)) {
	t.Run("SQLite", func(t *testing.T) { f(t, "sqlite:"+filepath.Join(t.TempDir(), "catalog.db")) })
	t.Run("Postgres", func(t *testing.T) { f(t, pgtest.NewDB(t)) })
}

func open(t *testing.T, url string) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCatalogue(t *testing.T) {
	backends(t, func(t *testing.T, url string) {
		ctx := context.Background()
		c := open(t, url)
		tpl := catalogtest.Template(t)
		var ids []string
		for i := range 6 {
			b := catalogtest.Scaled(t, tpl, 1+float64(i)/100, i, 4+4*(i%2))
			e, added, err := c.Add(ctx, fmt.Sprintf("/results/r%d.json", i), b, catalog.Meta{Tags: []string{"nightly", " ", "nightly"}, Commit: "abc123"})
			if err != nil || !added {
				t.Fatalf("add %d: added %v, %v", i, added, err)
			}
			ids = append(ids, e.ID)
			// The same bytes again are the same entry, unchanged.
			again, added, err := c.Add(ctx, "/elsewhere.json", b, catalog.Meta{Tags: []string{"other"}})
			if err != nil || added || again.ID != e.ID || again.Path != e.Path || strings.Join(again.Tags, ",") != "nightly" {
				t.Fatalf("re-add %d: added %v, %+v, %v", i, added, again, err)
			}
		}
		all, err := c.List(ctx, catalog.Filter{})
		if err != nil || len(all) != 6 {
			t.Fatalf("list: %d entries, %v", len(all), err)
		}
		e := all[0] // the newest
		if e.ID != ids[5] || e.Kind != catalog.KindRun || e.Workload != "tproc-c" || e.Commit != "abc123" || e.Primary != "nopm" || e.Config["vus"] != "8" {
			t.Fatalf("newest entry: %+v", e)
		}
		m, ok := e.Metric("nopm")
		if !ok || m.Low == nil || m.High == nil || !(*m.Low < m.Value && m.Value < *m.High) {
			t.Fatalf("nopm of the newest, with the interval of its batches: %+v", m)
		}
		count := func(f catalog.Filter) int {
			t.Helper()
			es, err := c.List(ctx, f)
			if err != nil {
				t.Fatalf("%+v: %v", f, err)
			}
			return len(es)
		}
		where := func(s ...string) []catalog.Cond {
			var out []catalog.Cond
			for _, w := range s {
				cond, err := catalog.ParseCond(w)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, cond)
			}
			return out
		}
		nopm := m.Value / 1.05 // the first run's
		for _, tc := range []struct {
			f    catalog.Filter
			want int
		}{
			{catalog.Filter{Where: where("config.vus=8")}, 3},
			{catalog.Filter{Where: where("config.vus=8.0")}, 3},
			{catalog.Filter{Where: where("config.vus!=8")}, 3},
			{catalog.Filter{Where: where("config.vus>4")}, 3},
			{catalog.Filter{Where: where(fmt.Sprintf("metric.nopm>%f", nopm*1.025))}, 3},
			{catalog.Filter{Where: where("config.vus=8", fmt.Sprintf("metric.nopm>%f", nopm*1.025))}, 2},
			{catalog.Filter{Where: where("target.kind=postgres")}, 6},
			{catalog.Filter{Target: "postgres:15"}, 6},
			{catalog.Filter{Target: "mariadb"}, 0},
			{catalog.Filter{Tags: []string{"nightly"}}, 6},
			{catalog.Filter{Tags: []string{"other"}}, 0},
			{catalog.Filter{Where: where("tag!=nightly")}, 0},
			{catalog.Filter{Workload: "tproc-c", Since: time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)}, 3},
			{catalog.Filter{Limit: 2}, 2},
			{catalog.Filter{Where: where("commit~bc1")}, 6},
			{catalog.Filter{Where: where("workload~100%")}, 0},
		} {
			if got := count(tc.f); got != tc.want {
				t.Errorf("%+v: %d entries, want %d", tc.f, got, tc.want)
			}
		}
		// Any unique start of an ID names it; a start two share is refused.
		got, err := c.Get(ctx, ids[2][:8])
		if err != nil || got.ID != ids[2] {
			t.Fatalf("get by prefix: %v %v", got, err)
		}
		if _, err := c.Get(ctx, "zz"); !errors.As(err, new(*exitcode.UserError)) {
			t.Fatalf("a bad ID: %v", err)
		}
		doc, err := c.Document(ctx, ids[2])
		if err != nil || catalog.Hash(doc) != ids[2] {
			t.Fatalf("the document back: hash %s, %v", catalog.Hash(doc), err)
		}
		if _, err := c.Tag(ctx, ids[2], []string{"baseline"}); err != nil {
			t.Fatal(err)
		}
		if n := count(catalog.Filter{Tags: []string{"baseline", "nightly"}}); n != 1 {
			t.Fatalf("tagged: %d", n)
		}
		if _, err := c.Remove(ctx, ids[2]); err != nil {
			t.Fatal(err)
		}
		if n := count(catalog.Filter{}); n != 5 {
			t.Fatalf("after rm: %d", n)
		}
		if _, err := c.Document(ctx, ids[2]); err == nil {
			t.Fatal("a removed entry's document is still there")
		}
		hist, info, err := c.History(ctx, "nopm", catalog.Filter{}, "vus")
		if err != nil || len(hist) != 5 || info == nil || !info.Higher || hist[0].Group != "4" || hist[1].Group != "8" || !hist[0].StartedAt.Before(hist[4].StartedAt) {
			t.Fatalf("history: %+v %+v %v", hist, info, err)
		}
	})
}

// TestSchemaVersions: every schema of documents loads, a sweep is an
// entry of its own, and a catalogue a newer dbrig made is refused in one
// line.
func TestSchemaVersions(t *testing.T) {
	backends(t, func(t *testing.T, url string) {
		ctx := context.Background()
		c := open(t, url)
		for _, f := range []string{"run.json", "sweep.json", "telemetry-run.json", "cpu-run.json", "blockio-sweep/sweep.json"} {
			b, err := os.ReadFile(filepath.Join("../report/testdata", f))
			if err != nil {
				t.Fatal(err)
			}
			e, _, err := c.Add(ctx, f, b, catalog.Meta{})
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			want := catalog.KindRun
			if strings.HasSuffix(f, "sweep.json") {
				want = catalog.KindSweep
			}
			if e.Kind != want || e.Workload == "" || (want == catalog.KindRun && len(e.Metrics) == 0) {
				t.Errorf("%s: %+v", f, e)
			}
		}
		if _, _, err := c.Add(ctx, "x.json", []byte(`{"schema_version": 99}`), catalog.Meta{}); err == nil || errors.Is(err, catalog.ErrStore) {
			t.Fatalf("a document of schema 99: %v", err)
		}
		c.Close()
		raise(t, url)
		_, err := catalog.Open(ctx, url)
		if err == nil || !strings.Contains(err.Error(), "newer dbrig") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("a newer catalogue: %v", err)
		}
	})
}

// TestNoSecretStored: a target URL with a password in a document given to
// the catalogue is indexed without it.
func TestNoSecretStored(t *testing.T) {
	c := open(t, "sqlite:"+filepath.Join(t.TempDir(), "c.db"))
	b, err := os.ReadFile("../report/testdata/cpu-run.json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	json.Unmarshal(b, &d)
	d["target"].(map[string]any)["url"] = "postgres://bench:s3cret-pw@db:5432/bench"
	b, _ = json.Marshal(d)
	e, _, err := c.Add(context.Background(), "", b, catalog.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(context.Background(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(got)
	if strings.Contains(string(out), "s3cret") || !strings.Contains(got.TargetURL, "@db:5432/bench") {
		t.Fatalf("the entry: %s", out)
	}
}

// raise sets the catalogue at url to a schema version past this dbrig's.
func raise(t *testing.T, url string) {
	t.Helper()
	c := open(t, url)
	if err := catalog.SetVersionForTest(c, catalog.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
}

// TestStepAtRun20 is the regression check end to end: 30 documents of
// one setup, made from a real run by scaling its throughput with 2% noise,
// the test itself moving it down 10% from the 20th on. The change points
// and regress name run 20; regress finds nothing at the newest run, whose
// baseline is already on the new level, nor in a series without the step.
func TestStepAtRun20(t *testing.T) {
	backends(t, func(t *testing.T, url string) {
		ctx := context.Background()
		for _, step := range []float64{0.9, 1} {
			c := open(t, url)
			var ids []string
			for _, b := range catalogtest.Step(t, step, uint64(step*10)) {
				e, _, err := c.Add(ctx, "", b, catalog.Meta{Tags: []string{fmt.Sprintf("step%v", step)}})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, e.ID)
			}
			f := catalog.Filter{Tags: []string{fmt.Sprintf("step%v", step)}}
			trend, err := c.TrendOf(ctx, "nopm", f, "")
			if err != nil || len(trend.Series) != 1 || len(trend.Series[0].Samples) != 30 {
				t.Fatalf("trend: %+v %v", trend, err)
			}
			changes := trend.Series[0].Changes
			newest, err := c.CheckRun(ctx, "nopm", f, "", 1, catalog.DefaultBaseline, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			at20, err := c.CheckRun(ctx, "nopm", f, ids[19][:10], 1, catalog.DefaultBaseline, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if step == 1 {
				if len(changes) != 0 || newest.Test.Verdict != catalog.NoChange || at20.Test.Verdict != catalog.NoChange {
					t.Errorf("no step: changes %+v, newest %s, run 20 %s", changes, newest.Test.Verdict, at20.Test.Verdict)
				}
				continue
			}
			if len(changes) != 1 || changes[0].ID != ids[19] || changes[0].Index != 19 || math.Abs(changes[0].Change+0.1) > 0.03 || changes[0].PValue > 0.05 {
				t.Errorf("the step at run 20: changes %+v", changes)
			}
			if at20.Test.Verdict != catalog.Regression || at20.Test.New[0].ID != ids[19] || len(at20.Test.Base) != 5 || at20.Test.Base[4].ID != ids[18] {
				t.Errorf("run 20 against the 5 before: %+v", at20.Test)
			}
			if newest.Test.Verdict != catalog.NoChange {
				t.Errorf("the newest run against the 5 before, all after the step: %+v", newest.Test)
			}
			if len(newest.Series.Changes) != 1 || newest.Series.Changes[0].ID != ids[19] {
				t.Errorf("regress's change points: %+v", newest.Series.Changes)
			}
		}
	})
}
