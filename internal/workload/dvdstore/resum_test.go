package dvdstore

import (
	"context"
	"testing"
	"time"

	runpkg "github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/dbrig/dbrig/internal/workload/workloadtest"
)

// TestReseed: runs opened apart and reseeded to one seed have the same
// config and their terminals the same first draws of both streams; to
// the next seed, others.
func TestReseed(t *testing.T) {
	ctx := context.Background()
	r, tg := openSmall(t, "sqlite:"+t.TempDir()+"/d.db", 1, time.Second)
	runs := [3]workload.Run{r}
	for i := 1; i < len(runs); i++ {
		w := newDVDStore()
		w.run.think = time.Second
		o, err := w.Open(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		runs[i] = o
	}
	workloadtest.Reseeds(t, runs, []int{0, 1, 13}, func(r workload.Run, id int) []any {
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
	ctx := context.Background()
	r, tg := openSmall(t, "sqlite:"+t.TempDir()+"/d.db", 1, 0)
	w := newDVDStore()
	o := runpkg.Defaults()
	o.VUs, o.Rampup, o.Duration = 3, 0, 2*time.Second
	o.Telemetry.Off = true
	d, err := runpkg.Run(ctx, tg, w, r, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Marks) != 2 || d.Counters["orders"] == 0 {
		t.Fatalf("marks %v, counters %v: want both, and orders", d.Marks, d.Counters)
	}
	workloadtest.Resummarizes(t, w, d, tallyNames)
}
