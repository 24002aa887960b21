package tprocc

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// drawsOf is what terminal id of r draws first: its home, its
// Stock-Level district, its first n transaction types with their think
// times, and the fingerprint of its first n transactions' inputs.
func drawsOf(t *testing.T, r *runner, id, n int) []any {
	tm := r.NewTerminal(id).(*terminal)
	d := []any{tm.home, tm.slevD, inputsFingerprint(t, &r.cfg, id, n)}
	for range n {
		tx := tm.Next()
		_, think := tm.Pacing(tx)
		d = append(d, tx, think)
	}
	return d
}

// TestReseed: two runs opened on one build and reseeded to the same
// seed have the same config, run constants and terminals' first draws;
// reseeded to the next seed, they differ. Reseed is the code Open seeds
// a run with, so a part that takes another's seed runs that part's
// streams.
func TestReseed(t *testing.T) {
	ctx := context.Background()
	w, tg := buildOn(t, onSQLite, 2)
	w.keying = true
	workloadtest.Reseeds(t, func() (workload.Run, error) { return w.Open(ctx, tg) }, []int{0, 1, 13}, func(run workload.Run, id int) []any {
		r := run.(*runner)
		if c := r.cfg.C; c != runConstants(r.Seed(), r.cLoad) {
			t.Errorf("run constants %+v, not the seed's", c)
		}
		// Home and district come from the id alone, whatever the seed.
		return drawsOf(t, r, id, 100)[2:]
	})
}

// TestPartTerminalsUnion: the terminals that three parts of a run make
// from their global ids (striped: part k has k-1, k-1+3, ...), each part
// with its own copy of the run's config, are the whole run's: the same
// home warehouse, Stock-Level district and first draws, so a terminal
// depends on its global id only.
func TestPartTerminalsUnion(t *testing.T) {
	const terminals, parts = 23, 3
	whole := &runner{cfg: *testConfig(t, 2)}
	whole.cfg.Keying = true
	want := make([][]any, terminals)
	for id := range terminals {
		want[id] = drawsOf(t, whole, id, 100)
	}
	seen := make([]int, terminals)
	for k := 1; k <= parts; k++ {
		part := &runner{cfg: *testConfig(t, 2)}
		part.cfg.Keying = true
		for id := k - 1; id < terminals; id += parts {
			seen[id]++
			if got := drawsOf(t, part, id, 100); !reflect.DeepEqual(got, want[id]) {
				t.Errorf("part %d, terminal %d: home, district, draws\n%v\nthe whole run's\n%v", k, id, got, want[id])
			}
		}
		if n := part.terminals.Load(); n != int64((terminals-k)/parts+1) {
			t.Errorf("part %d made %d terminals", k, n)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("terminal %d made by %d parts", id, n)
		}
	}
}

// TestResummarizeMatchesSummarize: a short run's own figures, written to
// its document and read back, resummarized without a target give the
// metrics, lines, extra figures and audit that the document holds; in a
// keyed pooled run the efficiency counts the whole run's terminals and
// the audit its sessions.
func TestResummarizeMatchesSummarize(t *testing.T) {
	ctx := context.Background()
	w, tg := buildOn(t, onSQLite, 2)
	for _, c := range []struct {
		name             string
		keyed            bool
		vus, connections int
		perWarehouse     int
	}{
		{"unkeyed", false, 3, 0, terminalsPerWarehouse},
		{"keyed pooled", true, 30, 2, 15},
	} {
		t.Run(c.name, func(t *testing.T) {
			w.keying, w.perWarehouse = c.keyed, c.perWarehouse
			r, err := w.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			d := workloadtest.Run(t, tg, w, r, c.vus, c.connections)
			if len(d.Marks) != 2 || len(d.Lines) == 0 {
				t.Fatalf("marks %v, lines %q: want both", d.Marks, d.Lines)
			}
			workloadtest.Resummarizes(t, w, d)
		})
	}
}

// TestResummarizeRefuses: a config without a key the summary needs, or
// figures of other transactions or without a counter, are refused with
// what is wrong.
func TestResummarizeRefuses(t *testing.T) {
	res := &driver.Result{}
	for _, n := range txNames {
		res.Tx = append(res.Tx, driver.TxResult{Name: n})
	}
	counters := map[string]int64{}
	for _, n := range tallyNames {
		counters[n] = 0
	}
	cfg := map[string]any{"warehouses": 2.0, "mode": "sql", "all_warehouses": false, "keying_thinking": true, "terminals_per_warehouse": 10.0}
	w := &tprocc{}
	if _, err := w.Resummarize(workload.Figures{Config: cfg, Result: res, Counters: counters}); err != nil {
		t.Fatalf("resummarize: %v", err)
	}
	delete(cfg, "keying_thinking")
	if _, err := w.Resummarize(workload.Figures{Config: cfg, Result: res, Counters: counters}); err == nil || err.Error() != `config: no "keying_thinking"` {
		t.Errorf("without keying_thinking: %v", err)
	}
	cfg["keying_thinking"] = true
	delete(counters, tallyNames[0])
	if _, err := w.Resummarize(workload.Figures{Config: cfg, Result: res, Counters: counters}); err == nil || !strings.Contains(err.Error(), tallyNames[0]) {
		t.Errorf("without the counter %s: %v", tallyNames[0], err)
	}
	counters[tallyNames[0]] = 0
	res.Tx = res.Tx[1:]
	if _, err := w.Resummarize(workload.Figures{Config: cfg, Result: res, Counters: counters}); err == nil {
		t.Error("figures without new_order resummarized")
	}
}
