package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/dbrig/dbrig/internal/result"
)

// kneeGain is the least gain in the primary metric that one step up a
// load parameter must bring to be worth its latency: past the sweet spot
// more load buys less than this.
const kneeGain = 0.05

// sweetSpot finds, in a sweep of one numeric parameter (sessions, say),
// the point with the most throughput before latency climbs: the last
// point up to which each step still added kneeGain or more to the primary
// metric. It says so in a sentence, with the index of that point in
// s.Points, or returns false where the sweep has no such shape.
func sweetSpot(s *result.Sweep) (note string, point int, ok bool) {
	m := s.Primary()
	if len(s.Varied) != 1 || len(s.Points) < 3 || !m.HigherIsBetter {
		return "", 0, false
	}
	key := s.Varied[0]
	type pt struct {
		x, mean, p95 float64
		label        string
		index        int
	}
	var pts []pt
	for i, p := range s.Points {
		x, err := strconv.ParseFloat(p.Params[key], 64)
		st := p.Stats[m.Key]
		if err != nil || st == nil || len(p.P95) == 0 {
			return "", 0, false
		}
		pts = append(pts, pt{x, st.Mean, result.Mean(p.P95), p.Params[key], i})
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
	best := 0
	for i := 1; i < len(pts) && pts[i].mean >= pts[best].mean*(1+kneeGain); i++ {
		best = i
	}
	b := pts[best]
	n := fmt.Sprintf("Sweet spot: %s %s, with %s %s at a p95 latency of %s ms.", key, b.label, fmtValue(b.mean), m.Label, ms(b.p95))
	if best+1 < len(pts) {
		next := pts[best+1]
		n += fmt.Sprintf(" Going on to %s %s changed %s by %+.1f%% and the p95 latency by %+.0f%%.", key, next.label, m.Label,
			(next.mean/b.mean-1)*100, (next.p95/b.p95-1)*100)
	} else {
		n += fmt.Sprintf(" Each step up to it still gained %.0f%% or more: the spot may lie beyond the points swept.", kneeGain*100)
	}
	return n, b.index, true
}
