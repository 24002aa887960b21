package result

import "math"

// FaultDef is one figure of what the faults in a run cost it, which a
// sweep point keeps for each repetition that has it, with its mean, its
// interval and its change over the baseline, as it does a metric's.
type FaultDef struct {
	Key, Label, Unit string
}

// The keys of the fault figures, after the run document's fields they
// come from. InDoubtKey, the window's transactions in doubt, is the
// threshold's name.
const (
	// OutageKey is the longest stretch without a completion around the
	// run's actions (action_outages[].outage.seconds), and the per-VU
	// keys that action's per_vu median and max.
	OutageKey         = "outage.seconds"
	OutageVUMedianKey = "outage.per_vu.median"
	OutageVUMaxKey    = "outage.per_vu.max"
	// The durability audit's counts (durability.*).
	AcknowledgedKey = "durability.acknowledged"
	MissingKey      = "durability.missing"
	AuditInDoubtKey = "durability.in_doubt"
	// The conflicts' cost: the window's retries and aborts (after the
	// last retry) per minute, and the share (%) of the transactions'
	// time that retrying took (transactions[].retries, aborts,
	// retrying_ms over busy_ms).
	RetriesKey    = "retries_per_min"
	AbortsKey     = "aborts_per_min"
	RetryShareKey = "retrying_pct"
)

// FaultDefs are the fault figures, in the order reports show them.
var FaultDefs = []FaultDef{
	{OutageKey, "outage", "s"},
	{OutageVUMedianKey, "outage per VU, median", "s"},
	{OutageVUMaxKey, "outage per VU, max", "s"},
	{InDoubtKey, "in doubt", ""},
	{AcknowledgedKey, "acknowledged", ""},
	{MissingKey, "missing", ""},
	{AuditInDoubtKey, "in doubt at the audit", ""},
	{RetriesKey, "retries", "/min"},
	{AbortsKey, "aborts", "/min"},
	{RetryShareKey, "retrying", "%"},
}

// Change is the difference of a point's mean of a figure from its
// baseline's, in the figure's own unit, with a 95% interval from Welch's
// t, as Gain's. Either side with fewer than two values gives no interval
// (Low = High = Diff) and is never significant.
type Change struct {
	Diff        float64 `json:"diff"`
	Low         float64 `json:"low"`
	High        float64 `json:"high"`
	Significant bool    `json:"significant"`
}

// CompareChange is the change of x's mean from the baseline's; nil when
// there is nothing to compare.
func CompareChange(x, base []float64) *Change {
	if len(x) == 0 || len(base) == 0 {
		return nil
	}
	mx, mb, half, ok := welch(x, base)
	c := &Change{Diff: mx - mb, Low: mx - mb, High: mx - mb}
	if ok {
		c.Low, c.High = c.Diff-half, c.Diff+half
		c.Significant = c.Low > 0 || c.High < 0
	}
	return c
}

// DurabilitySum is a point's durability audits summed over its
// repetitions that had one.
type DurabilitySum struct {
	Audits       int   `json:"audits"`
	Acknowledged int64 `json:"acknowledged"`
	Missing      int64 `json:"missing"`
	InDoubt      int64 `json:"in_doubt"`
}

// LongestOutage is the outage around d's actions that lasted longest;
// false where d watched none.
func (d *Document) LongestOutage() (ActionOutage, bool) {
	var out ActionOutage
	for i, a := range d.ActionOutages {
		if i == 0 || a.Outage.Seconds > out.Outage.Seconds {
			out = a
		}
	}
	return out, len(d.ActionOutages) > 0
}

// AddFaults adds d's fault figures to the point's: its transactions in
// doubt always; the longest outage around its actions, with that one's
// per-VU median and max, where it watched one; its durability audit's
// counts where it had one; its retries, aborts and retrying share where
// it retried, ran at an isolation level of its own or on several nodes
// (where the others of its point did too, or their means would be of
// the repetitions that happened to retry).
func (p *SweepPoint) AddFaults(d *Document) {
	add := func(key string, v float64) {
		if p.Faults == nil {
			p.Faults = map[string][]float64{}
		}
		p.Faults[key] = append(p.Faults[key], v)
	}
	var inDoubt int64
	for _, tx := range d.Transactions {
		inDoubt += tx.InDoubt
	}
	add(InDoubtKey, float64(inDoubt))
	if a, ok := d.LongestOutage(); ok {
		add(OutageKey, a.Outage.Seconds)
		if a.PerVU.Count > 0 {
			add(OutageVUMedianKey, a.PerVU.Median)
			add(OutageVUMaxKey, a.PerVU.Max)
		}
	}
	if du := d.Durability; du != nil {
		add(AcknowledgedKey, float64(du.Acknowledged))
		add(MissingKey, float64(du.Missing))
		add(AuditInDoubtKey, float64(du.InDoubt))
	}
	if _, isolated := d.Config["isolation"]; (Retried(d) || isolated || d.Placement != nil) && d.WindowSeconds > 0 {
		var retries, aborts int64
		var retrying, busy float64
		for _, tx := range d.Transactions {
			retries, aborts, retrying, busy = retries+tx.Retries, aborts+tx.Aborts, retrying+tx.RetryingMS, busy+tx.BusyMS
		}
		minutes := d.WindowSeconds / 60
		add(RetriesKey, float64(retries)/minutes)
		add(AbortsKey, float64(aborts)/minutes)
		if busy > 0 {
			add(RetryShareKey, retrying/busy*100)
		}
	}
}

// RecomputeFaults refreshes every point's fault statistics, their
// changes over its baseline and its audits' sums, and nothing else: a
// reader that fills them in a sweep from before them leaves its metrics'
// figures as they were made. single says a change rests on a single
// value.
func RecomputeFaults(doc *Sweep) (single bool) {
	for i := range doc.Points {
		p := &doc.Points[i]
		p.FaultStats, p.FaultChanges = map[string]*Stats{}, map[string]*Change{}
		for _, f := range FaultDefs {
			single = refresh(f.Key, p.Faults, doc.baseline(i).Faults, p.FaultStats, p.FaultChanges, CompareChange) || single
		}
		p.Durability = nil
		if acked := p.Faults[AcknowledgedKey]; len(acked) > 0 {
			p.Durability = &DurabilitySum{Audits: len(acked), Acknowledged: sum(acked), Missing: sum(p.Faults[MissingKey]), InDoubt: sum(p.Faults[AuditInDoubtKey])}
		}
	}
	return single
}

// sum is the whole count the counts xs add up to.
func sum(xs []float64) int64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return int64(math.Round(s))
}
