package result

import (
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/telemetry"
)

func TestConflictLimits(t *testing.T) {
	d := &Document{Transactions: []Tx{
		{Name: "a", Retries: 90, Aborts: 2, RetryingMS: 300, BackoffMS: 100, BusyMS: 600},
		{Name: "b", Retries: 10, RetryingMS: 60, BackoffMS: 20, BusyMS: 400},
	}}
	ls := conflictLimits(d, telemetry.Summary{})
	if len(ls) != 1 || ls[0].Kind != LimitConflicts {
		t.Fatalf("limits %+v, want conflicts alone without a cluster", ls)
	}
	// 360 of 1,000 ms retrying: 36%, over the 30% ceiling.
	if got := ls[0].Score; got < 1.19 || got > 1.21 {
		t.Errorf("conflicts score %.3f, want 36/30", got)
	}
	if !strings.Contains(ls[0].Why, "36% of the transactions' time (12% backing off): 100 retries, 2 aborts") {
		t.Errorf("why %q", ls[0].Why)
	}
	members := []telemetry.MemberSummary{
		{Name: "n1", Paused: 12, FlowSent: 0, Seconds: 10, CertFailures: 1},
		{Name: "n2", Paused: 12, FlowSent: 3.5, Seconds: 10, CertFailures: 2, RecvQueue: telemetry.Level{Mean: 40, N: 10}},
	}
	ls = conflictLimits(d, telemetry.Summary{Members: members})
	if len(ls) != 2 || ls[1].Kind != LimitFlowControl {
		t.Fatalf("limits %+v, want conflicts and flow control", ls)
	}
	if got := ls[1].Score; got < 0.39 || got > 0.41 {
		t.Errorf("flow control score %.3f, want 12/30", got)
	}
	for _, want := range []string{"paused the cluster's writes 12%", "n2 asked for most pauses (3.5/s)", "40.0 on average"} {
		if !strings.Contains(ls[1].Why, want) {
			t.Errorf("flow control why %q lacks %q", ls[1].Why, want)
		}
	}
	if !strings.Contains(ls[0].Why, "the nodes failed 30 transactions at certification (3.0/s)") {
		t.Errorf("conflicts why %q lacks the certification failures", ls[0].Why)
	}
	// A run without retries, on one server, is not judged on them.
	if ls := conflictLimits(&Document{Transactions: []Tx{{Name: "a", BusyMS: 5}}}, telemetry.Summary{}); len(ls) != 0 {
		t.Errorf("limits %+v without retries or a cluster, want none", ls)
	}
}
