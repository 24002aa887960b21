// Package changepoint finds the runs at which a performance metric moved
// to a new level, by E-divisive means: Matteson and James, "A Nonparametric
// Approach for Multiple Change Point Analysis of Multivariate Data",
// Journal of the American Statistical Association 109(505), 2014
// (arXiv:1306.4933), with the paper's permutation test deciding when to
// stop. It is the method MongoDB runs over its performance tests (Daly et
// al., "Change Point Detection in Software Performance Testing", ICPE 2020)
// and the one Hunter, now Apache Otava, starts from. Being
// nonparametric, it needs no assumption that run-to-run noise is normal,
// which benchmark noise (long right tails, a few outliers) seldom is.
//
// The series is univariate and the distance is |x-y| (the paper's α = 1).
// Like MongoDB's implementation, a segment's split τ is sought with the
// right-hand part running to the segment's end; the paper also searches
// over where that part ends (κ), which finds a short excursion inside a
// long segment sooner but makes each scan of a segment O(n²) at best
// rather than O(n log n), and Otava's way to that holds the whole
// distance matrix (800 MB at 10,000 points).
//
// Each change found costs one permutation test, Permutations shuffles
// of the whole series at O(n log n) each: at 10,000 points about 85 ms
// of CPU per change, and 10 ms to conclude there is none. So the whole
// series is always analysed; there is no windowed mode. Hunter and Otava
// do run E-divisive over overlapping windows of 50 points, but each
// window is then a test at the given level, so they split at a 10 times
// laxer p-value and follow with a merge step of t-tests at 0.001 to
// throw out the many spurious changes that gives, which is a different
// detector with a different false-positive rate. A caller with a much
// longer history can pass its recent part.
package changepoint

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Options tune Detect; the zero value means the defaults.
type Options struct {
	// Alpha is the significance level: the search stops at the first
	// candidate whose permutation p-value exceeds it. 0 means 0.05.
	Alpha float64
	// Permutations is the number of shuffles behind each p-value. 0 means
	// 199, the R ecp package's default: with it Alpha·(Permutations+1) is
	// a whole number for 0.05, 0.01 and 0.005, so those levels can be met
	// exactly, and the p-value's Monte Carlo error near 0.05 is about
	// ±0.015. The smallest p-value possible is 1/(Permutations+1), so an
	// Alpha below that is an error rather than a detector that never
	// fires.
	Permutations int
	// MinSize is the fewest points allowed on either side of a change.
	// 0 means 3: the fewest that say anything about a regime's spread,
	// and few enough that a change in the last runs is found three runs
	// after it happened. It must be at least 2, since the within-segment
	// mean distance divides by the number of pairs.
	MinSize int
	// Seed drives the shuffles, so that the same series and Options
	// always give the same answer; 0 is as good a seed as any.
	Seed int64
}

// Point is one change of regime.
type Point struct {
	// Index is the first index of the new regime.
	Index int
	// PValue is the permutation p-value the change had when it was found.
	PValue float64
	// Before and After are the means of the segments either side, each
	// running to the neighbouring change or the series' end.
	Before, After float64
	// Change is (After-Before)/Before: +0.1 for a metric 10% higher after.
	// It is ±Inf when Before is 0.
	Change float64
}

// Detect returns the change points of xs in index order. A NaN or
// infinite value is an error, not skipped: dropping a run would shift
// every later Index, and filling it in would invent a measurement, so
// which to do is the caller's choice.
func Detect(xs []float64, o Options) ([]Point, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("changepoint: xs[%d] is %v", i, x)
		}
	}
	d := detector{
		o:   o,
		rng: rand.NewPCG(uint64(o.Seed), 0x6368616e6765), // any fixed stream will do
	}
	segs := []*segment{newSegment(xs, 0, len(xs), o.MinSize)}
	var found []Point
	for {
		best := -1
		for i, s := range segs {
			if s.scan != nil && (best < 0 || s.q > segs[best].q) {
				best = i
			}
		}
		// A best split whose q̂ is not positive has its halves no farther
		// apart than each is from itself: nothing to test.
		if best < 0 || segs[best].q <= 0 {
			break
		}
		p, ok := d.test(segs, segs[best].q)
		if !ok {
			break
		}
		s := segs[best]
		found = append(found, Point{Index: s.tau, PValue: p})
		segs = slices.Replace(segs, best, best+1,
			newSegment(xs, s.start, s.tau, o.MinSize),
			newSegment(xs, s.tau, s.end, o.MinSize))
	}
	slices.SortFunc(found, func(a, b Point) int { return a.Index - b.Index })
	for i := range found {
		lo, hi := 0, len(xs)
		if i > 0 {
			lo = found[i-1].Index
		}
		if i+1 < len(found) {
			hi = found[i+1].Index
		}
		p := &found[i]
		p.Before, p.After = mean(xs[lo:p.Index]), mean(xs[p.Index:hi])
		p.Change = (p.After - p.Before) / p.Before
	}
	return found, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Permutations == 0 {
		o.Permutations = 199
	}
	if o.MinSize == 0 {
		o.MinSize = 3
	}
	switch {
	case !(o.Alpha > 0 && o.Alpha < 1):
		return o, fmt.Errorf("changepoint: Alpha %v is not in (0, 1)", o.Alpha)
	case o.Permutations < 0:
		return o, fmt.Errorf("changepoint: Permutations %d is negative", o.Permutations)
	case o.Alpha < 1/float64(o.Permutations+1):
		return o, fmt.Errorf("changepoint: Alpha %v is below 1/(Permutations+1) = %v, the smallest p-value %d permutations can give",
			o.Alpha, 1/float64(o.Permutations+1), o.Permutations)
	case o.MinSize < 2:
		return o, fmt.Errorf("changepoint: MinSize %d is below 2", o.MinSize)
	}
	return o, nil
}

type detector struct {
	o   Options
	rng *rand.PCG
}

// test is the paper's permutation test of the best candidate over all
// segments (observed q̂ obs): each replicate shuffles every segment
// within itself, as the null of no further change allows, and takes the
// best split over all of them, so that picking the largest of several
// segments' statistics is part of the null too. Shuffling only the
// candidate's own segment would leave that selection out and flag too
// much: in a trial of 2000 series with two real changes, a spurious
// third in 15% of them rather than 5.8%. It stops early once the p-value must exceed Alpha (Besag and
// Clifford's sequential test), which makes the same decision for a
// fraction of the cost of the last, unsuccessful test.
func (d *detector) test(segs []*segment, obs float64) (p float64, significant bool) {
	// Shuffled statistics that equal obs exactly (ties in the data) come
	// out a rounding error either side of it.
	bar := obs - 1e-9*obs
	n := float64(d.o.Permutations + 1)
	hits := 0
	for range d.o.Permutations {
		for _, s := range segs {
			if s.scan == nil || s.constant {
				continue
			}
			d.shuffle(s.order)
			if _, q := s.scan.best(s.order); q >= bar {
				hits++
				break
			}
		}
		if float64(1+hits)/n > d.o.Alpha {
			return float64(1+hits) / n, false
		}
	}
	return float64(1+hits) / n, true
}

// shuffle is Fisher-Yates written out, not rand.Shuffle, so that a Seed
// gives the same answer whatever Go release built the program: only the
// PCG generator's output is fixed by its definition.
func (d *detector) shuffle(order []int32) {
	for i := len(order) - 1; i > 0; i-- {
		j, _ := bits.Mul64(d.rng.Uint64(), uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
