package blockio

import (
	"context"
	"testing"

	"github.com/dbrig/dbrig/internal/workload"
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// TestReseed: runs opened apart and reseeded to one seed have the same
// config and their terminals the same first operations, ranges and think
// times; to the next seed, others.
func TestReseed(t *testing.T) {
	ctx := context.Background()
	w := &blockio{scale: "2048", schemas: 2, loaders: 1, seed: 1, workUnit: 32, updatePct: 20, redo: redoLite,
		hotspot: 3, hotspotSize: "1MB", think: "1ms,5ms"}
	tg := build(t, "sqlite:"+t.TempDir()+"/b.db", w)
	workloadtest.Reseeds(t, func() (workload.Run, error) { return w.Open(ctx, tg) }, []int{0, 1, 13}, func(r workload.Run, id int) []any {
		tm := newTerminal(&r.(*runner).cfg, id)
		var d []any
		for range 100 {
			tx := tm.Next()
			_, think := tm.Pacing(tx)
			d = append(d, tx, tm.lo, tm.hi, think)
		}
		return d
	})
}

// TestResummarizeMatchesSummarize: a short pooled run's own figures,
// written to its document and read back, resummarized without a target
// give the metrics, lines and audit that the document holds.
func TestResummarizeMatchesSummarize(t *testing.T) {
	ctx := context.Background()
	w := &blockio{scale: "2048", schemas: 2, loaders: 1, seed: 1, workUnit: 32, updatePct: 20, redo: redoLite, hotspotSize: "8MB"}
	tg := build(t, "sqlite:"+t.TempDir()+"/b.db", w)
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := workloadtest.Run(t, tg, w, r, 6, 2)
	if d.Sessions == nil || len(d.Audit) != 1 {
		t.Fatalf("sessions %+v, audit %+v: want a pool and the update share", d.Sessions, d.Audit)
	}
	workloadtest.Resummarizes(t, w, d)
}
