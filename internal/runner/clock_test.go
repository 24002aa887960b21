package runner_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbrig/dbrig/internal/dbtarget"
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/workload"
)

// slowOpen is a workload whose one virtual user takes openTime to open,
// then does nothing a millisecond at a time.
type slowOpen struct{ openTime time.Duration }

func (w slowOpen) Name() string { return "slow-open" }
func (w slowOpen) Info() workload.Info {
	return workload.Info{Metrics: []workload.Metric{{Key: "tpm", Label: "per minute", Unit: "per minute"}}, Primary: "tpm", PrimaryTx: "nothing"}
}
func (w slowOpen) RunFlags(*pflag.FlagSet) {}
func (w slowOpen) Open(context.Context, dbtarget.Target) (workload.Run, error) {
	return w, nil
}
func (w slowOpen) TxNames() []string    { return []string{"nothing"} }
func (w slowOpen) TallyNames() []string { return nil }
func (w slowOpen) NewVU(context.Context, int) (driver.VU, error) {
	time.Sleep(w.openTime)
	return idleVU{}, nil
}
func (w slowOpen) Config() map[string]any { return map[string]any{} }
func (w slowOpen) Mark(context.Context) (workload.Mark, error) {
	return workload.Mark{Values: map[string]int64{}}, nil
}
func (w slowOpen) Summarize(*driver.Result, workload.Mark, workload.Mark) workload.Summary {
	return workload.Summary{Values: map[string]workload.Value{}}
}
func (w slowOpen) Progress([]int64) string { return "" }
func (w slowOpen) Close() error            { return nil }

type idleVU struct{}

func (idleVU) Next() int { return 0 }
func (idleVU) Run(context.Context, int, driver.Tally) error {
	time.Sleep(time.Millisecond)
	return nil
}
func (idleVU) Reconnect(context.Context) error { return nil }
func (idleVU) Close() error                    { return nil }

// TestOneClock: the telemetry and the marks share the series' clock, the
// driver's, which starts once the virtual users are open. A VU that takes
// 800 ms to open puts the telemetry's window start 800 ms later than the
// throughput's if they do not.
func TestOneClock(t *testing.T) {
	ctx := context.Background()
	tg, err := dbtarget.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	w := slowOpen{openTime: 800 * time.Millisecond}
	o := runner.Defaults()
	o.VUs, o.Rampup, o.Duration = 1, 500*time.Millisecond, time.Second
	o.Telemetry.Interval = 100 * time.Millisecond
	o.Telemetry.SessionHz = 0
	o.Progress, o.Warn = func(string) {}, func(string) {}
	doc, err := runner.Run(ctx, tg, w, w, o)
	if err != nil {
		t.Fatal(err)
	}
	rec := doc.Telemetry
	if rec == nil || rec.Host == nil || len(rec.Host.Samples) == 0 || len(doc.Marks) != 2 {
		t.Fatalf("telemetry %+v, marks %+v: want host samples and two marks", rec, doc.Marks)
	}
	// The driver's window starts after its ramp-up, on its own clock.
	if start := o.Rampup.Seconds(); math.Abs(rec.Window[0]-start) > 0.3 || math.Abs(doc.Marks[0].At-start) > 0.3 {
		t.Errorf("telemetry's window starts at %.2f s, the start mark at %.2f s: want both near the ramp-up's end, %.2f s", rec.Window[0], doc.Marks[0].At, start)
	}
	if first := rec.Host.Samples[0].T; first > 0 {
		t.Errorf("first host sample at %.2f s: want it before the driver's clock started, while the VU opened", first)
	}
}
