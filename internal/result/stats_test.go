package result

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.5f, want %.5f", what, got, want)
	}
}

func TestStatsTQuantile(t *testing.T) {
	for _, tc := range []struct{ df, want float64 }{
		{1, 12.706}, {2, 4.303}, {4, 2.776}, {10, 2.228}, {29, 2.045}, {30, 2.042},
		// Exact values beyond the table, and between its entries.
		{31, 2.0395}, {40, 2.0211}, {60, 2.0003}, {120, 1.9799}, {1e9, 1.95996}, {math.Inf(1), 1.95996},
		{1.5, 6.0167}, {2.5, 3.5747}, {4.5, 2.6589}, {3.2941, 3.0276},
	} {
		near(t, "t(0.975)", TQuantile975(tc.df), tc.want, 0.0005*tc.want)
	}
}

func TestStatsSummarize(t *testing.T) {
	st := Summarize([]float64{10, 12, 14})
	near(t, "mean", st.Mean, 12, 1e-9)
	near(t, "stddev", st.StdDev, 2, 1e-9)
	half := 4.303 * 2 / math.Sqrt(3)
	near(t, "ci low", st.CILow, 12-half, 1e-9)
	near(t, "ci high", st.CIHigh, 12+half, 1e-9)
	near(t, "mean of 1, 2, 3", Mean([]float64{1, 2, 3}), 2, 1e-9)
	if st.N != 3 {
		t.Errorf("n %d", st.N)
	}
	one := Summarize([]float64{7})
	if one.N != 1 || one.Mean != 7 || one.StdDev != 0 || one.CILow != 7 || one.CIHigh != 7 {
		t.Errorf("one value: %+v", one)
	}
	if Summarize(nil) != nil || Mean(nil) != 0 {
		t.Error("stats of nothing")
	}
}

func TestGain(t *testing.T) {
	// Equal variances 4, n 3 each: Welch's df is 4, se sqrt(8/3).
	g := CompareGain([]float64{110, 112, 114}, []float64{100, 102, 104})
	near(t, "pct", g.Pct, (112.0/102-1)*100, 1e-9)
	half := 2.776 * math.Sqrt(8.0/3) / 102 * 100
	near(t, "low", g.Low, g.Pct-half, 1e-9)
	near(t, "high", g.High, g.Pct+half, 1e-9)
	if !g.Significant {
		t.Errorf("gain %+v not significant", g)
	}

	// Unequal variances: df = (100/3+25/3)^2 / ((100/3)^2/2 + (25/3)^2/2) = 2.9412,
	// where t(0.975) is 3.2188.
	g = CompareGain([]float64{100, 110, 120}, []float64{100, 105, 110})
	near(t, "pct", g.Pct, (110.0/105-1)*100, 1e-9)
	half = 3.2188 * math.Sqrt(125.0/3) / 105 * 100
	near(t, "low", g.Low, g.Pct-half, 1e-3)
	if g.Significant || g.Low > 0 {
		t.Errorf("gain %+v: the interval includes 0, want not significant", g)
	}

	// A loss is significant too.
	g = CompareGain([]float64{80, 81, 82}, []float64{100, 101, 102})
	if !g.Significant || g.High >= 0 {
		t.Errorf("loss %+v, want significant and below 0", g)
	}

	// One repetition: no interval, never significant.
	g = CompareGain([]float64{150}, []float64{100})
	if g.Pct != 50 || g.Low != 50 || g.High != 50 || g.Significant {
		t.Errorf("single repetition %+v", g)
	}
	if CompareGain(nil, []float64{1}) != nil || CompareGain([]float64{1}, []float64{0}) != nil {
		t.Error("gain over nothing")
	}
}
