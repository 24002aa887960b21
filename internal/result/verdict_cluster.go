package result

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// Limit kinds of a cluster whose nodes all take writes, and of
// transactions the database asks the client to retry.
const (
	// LimitFlowControl is a cluster that paused its writes for a node
	// that fell behind in applying the others' write sets.
	LimitFlowControl = "flow control"
	// LimitConflicts is the time that retried attempts, and the backoffs
	// before them, took of the transactions' time.
	LimitConflicts = "conflicts"
)

// conflictLimits judges the retries, where the run had any or ran on a
// cluster of nodes that all take writes, and flow control on such a
// cluster: each a share of its time against the waits' ceiling.
func conflictLimits(d *Document, s telemetry.Summary) []Limit {
	var out []Limit
	var retries, aborts int64
	var retrying, backoff, busy float64
	for _, t := range d.Transactions {
		retries, aborts = retries+t.Retries, aborts+t.Aborts
		retrying, backoff, busy = retrying+t.RetryingMS, backoff+t.BackoffMS, busy+t.BusyMS
	}
	if (retries > 0 || len(s.Members) > 0) && busy > 0 {
		share := retrying / busy * 100
		out = append(out, Limit{Kind: LimitConflicts, Score: share / waitCeiling,
			Why: fmt.Sprintf("retried attempts and their backoffs took %.0f%% of the transactions' time (%.0f%% backing off): %s, %s%s",
				share, backoff/busy*100, retriesOf(retries), human.Count(int(aborts), "abort"), certified(s.Members))})
	}
	if len(s.Members) == 0 {
		return out
	}
	most := slices.MaxFunc(s.Members, func(a, b telemetry.MemberSummary) int { return cmp.Compare(a.Paused, b.Paused) })
	asked := slices.MaxFunc(s.Members, func(a, b telemetry.MemberSummary) int { return cmp.Compare(a.FlowSent, b.FlowSent) })
	why := fmt.Sprintf("flow control paused the cluster's writes %.0f%% of the time", most.Paused)
	if asked.FlowSent > 0 {
		why += fmt.Sprintf("; %s asked for most pauses (%.1f/s), its queue of write sets to apply %.1f on average", asked.Name, asked.FlowSent, asked.RecvQueue.Mean)
	}
	return append(out, Limit{Kind: LimitFlowControl, Score: most.Paused / waitCeiling, Why: why})
}

// certified says how many of the nodes' transactions failed
// certification, where the run was on a cluster.
func certified(ms []telemetry.MemberSummary) string {
	var failed, seconds float64
	for _, m := range ms {
		failed += m.CertFailures * m.Seconds
		seconds = max(seconds, m.Seconds)
	}
	if len(ms) == 0 || seconds == 0 {
		return ""
	}
	return fmt.Sprintf("; the nodes failed %s at certification (%.1f/s)", human.Count(int(failed+0.5), "transaction"), failed/seconds)
}

// retriesOf counts n retries in words.
func retriesOf(n int64) string {
	if n == 1 {
		return "1 retry"
	}
	return human.Thousands(float64(n)) + " retries"
}
