package changepoint

import (
	"cmp"
	"math"
	"slices"
)

// segment is a stretch between neighbouring change points (or the
// series' ends) with its best split, found once: it does not change until
// the segment itself is split.
type segment struct {
	start, end int
	// tau is the best split as an index into the series, q its q̂.
	tau int
	q   float64
	// scan is nil when the segment is too short to split at all.
	scan *scanner
	// constant segments are left out of the shuffles: every
	// rearrangement of them scores 0.
	constant bool
	// order is the permutation of the segment being scored, kept from
	// one shuffle to the next.
	order []int32
}

func newSegment(xs []float64, start, end, minSize int) *segment {
	s := &segment{start: start, end: end}
	if end-start < 2*minSize {
		return s
	}
	s.scan = newScanner(xs[start:end], minSize)
	s.constant = s.scan.total == 0
	s.order = make([]int32, end-start)
	for i := range s.order {
		s.order[i] = int32(i)
	}
	tau, q := s.scan.best(s.order)
	s.tau, s.q = start+tau, q
	return s
}

// scanner finds a segment's best split, under any rearrangement of it, in
// O(m log m) for m points rather than the O(m²) of running sums over the
// distance matrix (or O(m³) recomputed at each split): moving the split
// one point right needs only that point's summed distance to the points
// before it, which a Fenwick tree over the values' ranks gives in
// O(log m), and its distance to all the others, which does not depend on
// the order and is worked out once from the sorted values. The
// permutation test scores Permutations rearrangements of every segment
// for each change found, so this cost is nearly all of Detect's.
type scanner struct {
	pts   []point
	total float64 // summed distance over all pairs
	min   int
	// tree is a Fenwick tree, by rank, of the points left of the split:
	// a prefix of it gives how many of them rank below a point and their
	// sum.
	tree []node
}

// point and node keep together what one step of the scan reads, since it
// reaches them in shuffled order.
type point struct {
	// z is the value less the segment's median, which keeps the sums,
	// and so their rounding errors, near the scale of the spread.
	z float64
	// dist is the summed distance to the rest of the segment.
	dist float64
	// rank orders the values, ties broken by position: an equal value
	// is at distance 0 whichever side of the point it counts on.
	rank int32
}

type node struct{ n, sum float64 }

func newScanner(xs []float64, minSize int) *scanner {
	m := len(xs)
	sorted := make([]int32, m)
	for i := range sorted {
		sorted[i] = int32(i)
	}
	slices.SortStableFunc(sorted, func(a, b int32) int { return cmp.Compare(xs[a], xs[b]) })
	median := xs[sorted[m/2]]
	s := &scanner{pts: make([]point, m), min: minSize, tree: make([]node, m+1)}
	var above float64
	for i, x := range xs {
		s.pts[i].z = x - median
		above += s.pts[i].z
	}
	var below float64
	for r, i := range sorted {
		p := &s.pts[i]
		above -= p.z
		p.rank = int32(r)
		p.dist = (float64(r)*p.z - below) + (above - float64(m-1-r)*p.z)
		below += p.z
		s.total += p.dist
	}
	s.total /= 2
	return s
}

// best returns the split τ of the segment, rearranged as order, with the
// largest
//
//	q̂(τ) = mk/(m+k) · (2/(mk) Σ|x−y| − Σ|x−x'|/C(m,2) − Σ|y−y'|/C(k,2))
//
// for the m points before τ and the k from it on, and that q̂. The
// within-part sums are over pairs (the paper's U-statistics, not
// MongoDB's V-statistics, which divide by m² and so favour splits
// that leave one part short).
func (s *scanner) best(order []int32) (tau int, q float64) {
	m := len(s.pts)
	tree := s.tree
	clear(tree)
	// Distances summed within the left part, within the right part and
	// between them.
	var left, right, between float64 = 0, s.total, 0
	var added float64
	tau, q = -1, math.Inf(-1)
	for t := 0; t < m-s.min; t++ {
		p := s.pts[order[t]]
		var c, lower float64
		for j := p.rank; j > 0; j &= j - 1 {
			c += tree[j].n
			lower += tree[j].sum
		}
		// p's distance to the t points already left of the split, and
		// to the points still right of it.
		toLeft := (c*p.z - lower) + ((added - lower) - (float64(t)-c)*p.z)
		toRight := p.dist - toLeft
		left += toLeft
		right -= toRight
		between += toRight - toLeft
		for j := int(p.rank) + 1; j <= m; j += j & -j {
			tree[j].n++
			tree[j].sum += p.z
		}
		added += p.z
		if n := t + 1; n >= s.min {
			k := m - n
			// q̂ as above, its factors multiplied out.
			qt := 2 / float64(m) * (between - float64(k)*left/float64(n-1) - float64(n)*right/float64(k-1))
			if qt > q {
				tau, q = n, qt
			}
		}
	}
	return tau, q
}
