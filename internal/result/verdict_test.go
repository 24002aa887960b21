package result

import (
	"slices"
	"testing"
)

// TestCPUSet: a cpuset list names its CPUs; a list that cannot be read
// names none, so that the host's CPUs stand in.
func TestCPUSet(t *testing.T) {
	for set, want := range map[string][]int{
		"0": {0}, "0-1": {0, 1}, "0,2-3": {0, 2, 3}, " 1 , 3": {1, 3},
		"": nil, "1-0": nil, "x": nil, "0-": nil,
	} {
		if got := cpuset(set); !slices.Equal(got, want) {
			t.Errorf("cpuset(%q) = %v, want %v", set, got, want)
		}
	}
}

// TestVerdictWithoutTelemetry: a run recorded without telemetry is judged
// on its virtual users' time alone, and says what it could not judge.
func TestVerdictWithoutTelemetry(t *testing.T) {
	d := &Document{WindowSeconds: 10, Config: map[string]any{"vus": 2.0},
		Transactions: []Tx{{Name: "a", Count: 1000}}}
	d.Transactions[0].Latency.Mean = 2 // ms: 2 s of 20 in transactions
	v := VerdictOf(d)
	if len(v.Limits) != 1 || v.Limits[0].Kind != LimitThink || len(v.Unknown) != 2 {
		t.Errorf("verdict %+v: want think time as the limit, and the CPUs and the waits not judged", v)
	}
	if VerdictOf(&Document{}) != nil {
		t.Error("a document with no window got a verdict")
	}
}

// TestVerdictShort: a sweep's line names the limit with the figure that
// says so, or the nearest resource and how near it came.
func TestVerdictShort(t *testing.T) {
	for _, c := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{Limits: []Limit{{Kind: LimitCommit, Score: 1.83, Why: "commits took 55% of database time"}}},
			"commit: commits took 55% of database time"},
		{Verdict{Below: []Limit{{Kind: LimitServerCPU, Score: 0.8, Why: "1.4 of 2 CPUs"}}},
			"none; nearest server CPU, at 80% of its ceiling: 1.4 of 2 CPUs"},
		{Verdict{}, "not judged"},
	} {
		if got := c.v.Short(); got != c.want {
			t.Errorf("Short() = %q, want %q", got, c.want)
		}
	}
}
