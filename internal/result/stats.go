package result

import (
	"math"
	"slices"
)

// t975 holds Student's t 0.975 quantiles (two-sided 95%) for 1..30
// degrees of freedom, as printed in the usual tables.
var t975 = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// z975 is the normal 0.975 quantile, the limit of t as df grows.
const z975 = 1.959964

// TQuantile975 is Student's t 0.975 quantile for df degrees of freedom.
// Whole df up to 30 come from the table. Welch's df is fractional, and
// interpolating the table is off by 1-2% at small df, so other df are
// solved from the t distribution itself; beyond 1000 the normal quantile
// is within 0.1%.
func TQuantile975(df float64) float64 {
	switch {
	case math.IsNaN(df) || df <= 0:
		return math.NaN()
	case df > 1000:
		return z975
	case df <= 30 && df == math.Floor(df):
		return t975[int(df)-1]
	}
	// The upper tail P(T > t) = I_x(df/2, 1/2)/2 with x = df/(df+t²)
	// falls as t grows: bisect for 0.025.
	lo, hi := z975, 700.0
	for range 100 {
		mid := (lo + hi) / 2
		if regIncBeta(df/2, 0.5, df/(df+mid*mid))/2 > 0.025 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by
// its continued fraction (Numerical Recipes' betacf, modified Lentz).
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x > (a+1)/(a+b+2) {
		return 1 - regIncBeta(b, a, 1-x)
	}
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		for _, num := range []float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			f *= c * d
		}
		if math.Abs(c*d-1) < 1e-14 {
			break
		}
	}
	return front * f / a
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// Summarize gives the mean of xs with the 95% confidence interval of the
// mean. With one value the interval is that value: there is nothing to
// estimate the spread from. Nil for no values.
func Summarize(xs []float64) *Stats {
	if len(xs) == 0 {
		return nil
	}
	mean, variance := meanVar(xs)
	st := &Stats{N: len(xs), Mean: mean, StdDev: math.Sqrt(variance), CILow: mean, CIHigh: mean}
	if st.N > 1 {
		half := TQuantile975(float64(st.N-1)) * st.StdDev / math.Sqrt(float64(st.N))
		st.CILow, st.CIHigh = mean-half, mean+half
	}
	return st
}

// Mean is the mean of xs, 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m, _ := meanVar(xs)
	return m
}

// CompareGain is the % change of x's mean over the baseline's, with a 95%
// interval from Welch's t on the difference of the means, divided by the
// baseline's mean. Either side with fewer than two values gives no
// interval (Low = High = Pct) and is never significant. Nil when there is
// nothing to compare.
func CompareGain(x, base []float64) *Gain {
	if len(x) == 0 || len(base) == 0 {
		return nil
	}
	mx, mb, half, ok := welch(x, base)
	if mb == 0 {
		return nil
	}
	pct := (mx/mb - 1) * 100
	g := &Gain{Pct: pct, Low: pct, High: pct}
	if !ok {
		return g
	}
	half = half / math.Abs(mb) * 100
	g.Low, g.High = pct-half, pct+half
	g.Significant = g.Low > 0 || g.High < 0
	return g
}

// welch is the means of x and base, and the half-width of the 95%
// interval of their difference from Welch's t; ok is false where either
// side has fewer than two values, and there is no interval.
func welch(x, base []float64) (mx, mb, half float64, ok bool) {
	mx, vx := meanVar(x)
	mb, vb := meanVar(base)
	if len(x) < 2 || len(base) < 2 {
		return mx, mb, 0, false
	}
	a, b := vx/float64(len(x)), vb/float64(len(base))
	df := math.Inf(1)
	if a+b > 0 {
		df = (a + b) * (a + b) / (a*a/float64(len(x)-1) + b*b/float64(len(base)-1))
	}
	return mx, mb, TQuantile975(df) * math.Sqrt(a+b), true
}

// singleNote is the note a sweep gets when its gains rest on single values.
const singleNote = "with a single repetition the gains have no confidence interval, so none is marked significant; use repeat: 3 or more"

// Recompute refreshes every point's statistics and gains, for every
// metric, and those of its fault figures (RecomputeFaults), from the
// values the sweep holds.
func Recompute(doc *Sweep) {
	single := false
	for i := range doc.Points {
		p := &doc.Points[i]
		p.Stats, p.Gains = map[string]*Stats{}, map[string]*Gain{}
		for _, m := range doc.Metrics {
			single = refresh(m.Key, p.Values, doc.baseline(i).Values, p.Stats, p.Gains, CompareGain) || single
		}
	}
	single = RecomputeFaults(doc) || single
	if single && doc.Repeat < 2 && !slices.Contains(doc.Notes, singleNote) {
		doc.Notes = append(doc.Notes, singleNote)
	}
}

// baseline is the point point i is compared with; an empty one where
// there is none.
func (s *Sweep) baseline(i int) *SweepPoint {
	if b := s.Points[i].BaselinePoint; b >= 0 && b < len(s.Points) {
		return &s.Points[b]
	}
	return &SweepPoint{}
}

// refresh sets stats[key] to the statistics of values[key], and
// changes[key] to compare's of them against base[key] (a nil base for a
// point without a baseline compares nothing); single says the comparison
// rests on a single value.
func refresh[C any](key string, values, base map[string][]float64, stats map[string]*Stats, changes map[string]*C, compare func(x, base []float64) *C) (single bool) {
	xs := values[key]
	if st := Summarize(xs); st != nil {
		stats[key] = st
	}
	c := compare(xs, base[key])
	if c == nil {
		return false
	}
	changes[key] = c
	return len(xs) < 2 || len(base[key]) < 2
}

// TwoSidedP is the two-sided p-value of Student's t statistic t with df
// degrees of freedom: P(|T| ≥ |t|) = I_x(df/2, 1/2), x = df/(df+t²); the
// normal's beyond 1000 degrees of freedom, or for infinite df.
func TwoSidedP(t, df float64) float64 {
	switch {
	case math.IsNaN(t) || math.IsNaN(df) || df <= 0:
		return math.NaN()
	case df > 1000:
		return math.Erfc(math.Abs(t) / math.Sqrt2)
	}
	return regIncBeta(df/2, 0.5, df/(df+t*t))
}
