package workload

import (
	"context"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/spf13/pflag"
)

// declared is a workload that is nothing but its declaration.
type declared Info

func (d declared) Name() string                                       { return "declared" }
func (d declared) Info() Info                                         { return Info(d) }
func (d declared) RunFlags(*pflag.FlagSet)                            {}
func (d declared) Open(context.Context, dbtarget.Target) (Run, error) { return nil, nil }

// TestRegisterRefuses: a second workload under a taken name, or one whose
// declaration the generic layers could not use, is a bug and panics at
// start-up rather than surfacing in a report.
func TestRegisterRefuses(t *testing.T) {
	good := Info{Metrics: []Metric{{Key: "rate", Label: "rate", HigherIsBetter: true}}, Primary: "rate"}
	for _, c := range []struct {
		name string
		info Info
		want string
	}{
		{"test-no-metrics", Info{Primary: "rate"}, "no metrics"},
		{"test-primary-missing", Info{Metrics: good.Metrics, Primary: "other"}, `primary metric "other"`},
		{"test-repeated-key", Info{Metrics: append(good.Metrics, good.Metrics[0]), Primary: "rate"}, "repeated"},
		{"test-twice", good, "registered twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "test-twice" {
				Register(c.name, func() Workload { return declared(c.info) })
				defer delete(registry, c.name)
			}
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), c.want) {
					t.Errorf("panic %v, want one saying %q", r, c.want)
				}
				if c.name != "test-twice" {
					if _, ok := New(c.name); ok {
						t.Error("the refused workload was registered")
					}
				}
			}()
			Register(c.name, func() Workload { return declared(c.info) })
		})
	}
}

// TestRateShared: in a run with other workloads beside it (--with), the
// database's transaction counter counts every workload's transactions,
// so no workload takes a rate from it, and its summary says why; a
// counter of its own still gives one.
func TestRateShared(t *testing.T) {
	m := &Mixed{groups: []Group{{W: declared{}}, {W: declared{}}}}
	start := m.marks(0, Mark{At: 1, Values: map[string]int64{Xacts: 100, "orders": 10}})
	end := m.marks(0, Mark{At: 3, Values: map[string]int64{Xacts: 500, "orders": 30}})
	if r := Rate(start, end, Xacts, true); r.Value != nil || r.Gap != Shared {
		t.Errorf("transactions: %+v; want none, shared", r)
	}
	if r := Rate(start, end, "orders", false); r.Value == nil || *r.Value != 10 || r.Gap != Counted {
		t.Errorf("orders: %+v; want 10 a second", r)
	}
	if line := Agreement("TPM", Rated{Gap: Shared}, 100); !strings.Contains(line, "beside this one (--with)") {
		t.Errorf("agreement %q, want the workloads beside it named", line)
	}
	alone := Mark{At: 3, Values: map[string]int64{Xacts: 500}}
	if r := Rate(Mark{At: 1, Values: map[string]int64{Xacts: 100}}, alone, Xacts, true); r.Value == nil || *r.Value != 200 {
		t.Errorf("a run alone: %+v, want 200 a second", r)
	}
}
