package result

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/latency"
	"github.com/dbrig/dbrig/internal/workload"
)

// addEncoded merges the histogram enc (as Encode wrote it; "" is none)
// into h and returns h; a nil h becomes enc's own.
func addEncoded(h *hdrhistogram.Histogram, enc, path, what string) (*hdrhistogram.Histogram, error) {
	if enc == "" {
		return h, nil
	}
	e, err := latency.Decode(enc)
	if err != nil {
		return nil, exitcode.Userf("%s: %s: the histogram does not decode: %v", path, what, err)
	}
	if h == nil {
		return e, nil
	}
	h.Merge(e)
	return h, nil
}

// mergeTx sums the parts' transactions by type, in the order the first
// part names them, their histograms merged exactly.
func mergeTx(parts []partDoc) ([]driver.TxResult, error) {
	var out []driver.TxResult
	at := map[string]int{}
	for _, p := range parts {
		for _, tx := range p.Transactions {
			k, ok := at[tx.Name]
			if !ok {
				k, at[tx.Name] = len(out), len(out)
				out = append(out, driver.TxResult{Name: tx.Name, Hist: latency.NewHistogram()})
			}
			t := &out[k]
			t.Count += tx.Count
			t.Errors += tx.Errors
			t.InDoubt += tx.InDoubt
			t.Retries += tx.Retries
			t.Aborts += tx.Aborts
			t.Retrying += fromMS(tx.RetryingMS)
			t.Backoff += fromMS(tx.BackoffMS)
			t.Busy += fromMS(tx.BusyMS)
			t.ErrorSample = cmp.Or(t.ErrorSample, tx.ErrorSample)
			var err error
			if t.Hist, err = addEncoded(t.Hist, tx.Histogram, p.path, "transaction "+tx.Name); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// mergeSeries sums the parts' seconds by index (every part counts from
// the common start): counts and errors summed, percentiles read from the
// seconds' histograms merged, the phase the marker's. It merges one
// second at a time, in order, and keeps no second's histograms once its
// percentiles are read: a day's run has 86,400 seconds, each a pair of
// histograms of 26 KB decoded.
func mergeSeries(parts []partDoc, marker int) ([]Point, error) {
	type at struct{ sec, part, point int }
	var all []at
	for i, p := range parts {
		for j, pt := range p.Series {
			all = append(all, at{int(math.Round(pt.T)), i, j})
		}
	}
	slices.SortStableFunc(all, func(a, b at) int { return cmp.Compare(a.sec, b.sec) })
	var out []Point
	for len(all) > 0 {
		k := all[0].sec
		n := slices.IndexFunc(all, func(a at) bool { return a.sec != k })
		if n < 0 {
			n = len(all)
		}
		s := Point{T: float64(k)}
		var hist, wait *hdrhistogram.Histogram
		for _, a := range all[:n] {
			p := parts[a.part]
			pt := p.Series[a.point]
			if s.Phase == "" || p.Part.Index == marker {
				s.Phase = pt.Phase
			}
			s.Counts = addCounts(s.Counts, pt.Counts)
			s.Errors += pt.Errors
			s.InDoubt += pt.InDoubt
			var err error
			what := fmt.Sprintf("second %d", k)
			if hist, err = addEncoded(hist, pt.Histogram, p.path, what); err != nil {
				return nil, err
			}
			if wait, err = addEncoded(wait, pt.WaitHistogram, p.path, what+"'s wait"); err != nil {
				return nil, err
			}
		}
		if hist != nil {
			s.Latency = latency.PercentilesOf(hist)
		}
		if wait != nil {
			s.Wait = latency.PercentilesOf(wait)
		}
		out = append(out, s)
		all = all[n:]
	}
	return out, nil
}

// addCounts adds b to a, as long as the longer.
func addCounts(a, b []int64) []int64 {
	out := make([]int64, max(len(a), len(b)))
	copy(out, a)
	for i, n := range b {
		out[i] += n
	}
	return out
}

// mergeSessions sums the pooled parts' sessions, their waits merged
// exactly; nil when no part was pooled.
func mergeSessions(parts []partDoc) (*driver.Pool, error) {
	var pool *driver.Pool
	for _, p := range parts {
		s := p.Sessions
		if s == nil {
			continue
		}
		if pool == nil {
			pool = &driver.Pool{Wait: latency.NewHistogram(), AllInUse: s.AllInUse}
		}
		pool.Terminals += s.Terminals
		pool.Sessions += s.Sessions
		pool.InUseMax += s.InUseMax
		pool.InUseP95 += s.InUseP95
		pool.QueuedMax += s.QueuedMax
		pool.QueuedP95 += s.QueuedP95
		pool.AllInUse = min(pool.AllInUse, s.AllInUse)
		var err error
		if pool.Wait, err = addEncoded(pool.Wait, s.WaitHistogram, p.path, "sessions' wait"); err != nil {
			return nil, err
		}
	}
	return pool, nil
}

// markerMarks are the marker's marks with its end's transaction counter
// less the other parts' end-edge flushes, which ran inside its window
// but are none of the workload's.
func markerMarks(marker partDoc, parts []partDoc) []Mark {
	var flushes int64
	for _, p := range parts {
		if p.Part.Index != marker.Part.Index {
			flushes += p.Part.EndFlushes
		}
	}
	var out []Mark
	for i, m := range marker.Marks {
		v := maps.Clone(m.Values)
		if n, ok := v[workload.Xacts]; ok && i == len(marker.Marks)-1 && i > 0 {
			v[workload.Xacts] = n - flushes
		}
		out = append(out, Mark{At: m.At, Values: v, Server: m.Server})
	}
	return out
}

// spread is how far apart the parts' window edges fell.
func spread(parts []partDoc) Spread {
	var starts, ends []time.Time
	var s Spread
	for _, p := range parts {
		starts = append(starts, p.Part.WindowStart)
		ends = append(ends, p.Part.WindowEnd)
		s.UncertaintyMs = max(s.UncertaintyMs, p.Part.Clock.UncertaintyMs)
	}
	s.StartMs, s.EndMs = widthMs(starts), widthMs(ends)
	return s
}

// widthMs is the milliseconds from the earliest of ts to the latest,
// leaving out the zero times of parts that never reached the edge.
func widthMs(ts []time.Time) float64 {
	ts = slices.DeleteFunc(ts, time.Time.IsZero)
	if len(ts) == 0 {
		return 0
	}
	return float64(slices.MaxFunc(ts, time.Time.Compare).Sub(slices.MinFunc(ts, time.Time.Compare))) / float64(time.Millisecond)
}
