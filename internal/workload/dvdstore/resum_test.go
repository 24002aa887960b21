package dvdstore

import (
	"context"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/workload"
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// TestReseed: runs opened apart and reseeded to one seed have the same
// config and their terminals the same first draws of both streams; to
// the next seed, others.
func TestReseed(t *testing.T) {
	ctx := context.Background()
	_, tg := openSmall(t, "sqlite:"+t.TempDir()+"/d.db", 1, time.Second)
	open := func() (workload.Run, error) {
		w := newDVDStore()
		w.run.think = time.Second
		return w.Open(ctx, tg)
	}
	workloadtest.Reseeds(t, open, []int{0, 1, 13}, func(r workload.Run, id int) []any {
		tm := newTerminal(&r.(*runner).cfg, id)
		var d []any
		for range 100 {
			d = append(d, tm.r.Uint64(), tm.think.Uint64())
		}
		return d
	})
}

// TestResummarizeMatchesSummarize: a short run's own figures, written to
// its document and read back, resummarized without a target give the
// metrics, lines and audit that the document holds.
func TestResummarizeMatchesSummarize(t *testing.T) {
	r, tg := openSmall(t, "sqlite:"+t.TempDir()+"/d.db", 1, 0)
	w := newDVDStore()
	d := workloadtest.Run(t, tg, w, r, 3, 0)
	if len(d.Marks) != 2 || d.Counters["orders"] == 0 {
		t.Fatalf("marks %v, counters %v: want both, and orders", d.Marks, d.Counters)
	}
	workloadtest.Resummarizes(t, w, d)
}
