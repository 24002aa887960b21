package catalog

import (
	"math"
	"math/rand/v2"
	"testing"
)

func samples(xs []float64, rel float64) []Sample {
	out := make([]Sample, len(xs))
	for i, x := range xs {
		out[i] = Sample{ID: string(rune('a'+i%26)) + "000", Value: x}
		if rel > 0 {
			lo, hi := x*(1-rel), x*(1+rel)
			out[i].Low, out[i].High = &lo, &hi
		}
	}
	return out
}

// TestRegressFalsePositives: over series without a change, each test's
// share of false alarms is about its alpha (the binomial margin around
// 5% of 2,000 is ±1%), and a 10% drop is found as often as the sizes of
// its two sides allow.
func TestRegressFalsePositives(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		base Baseline
		k    int
		// power is the share of 10% drops (3.3 standard deviations) a test
		// of these sizes finds, from its t distribution, less a margin.
		power float64
	}{
		{"one against last:5", Baseline{Kind: "last", N: 5}, 1, 0.5},
		{"three against last:5 (Welch)", Baseline{Kind: "last", N: 5}, 3, 0.85},
		{"one against first:10", Baseline{Kind: "first", N: 10}, 1, 0.75},
	} {
		const n = 2000
		alarms, found := 0, 0
		for range n {
			xs := make([]float64, 20)
			for i := range xs {
				xs[i] = 1000 * (1 + 0.03*rng.NormFloat64())
			}
			test, err := Regress(samples(xs, 0), len(xs)-1, tc.k, tc.base, true, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if test.Verdict != NoChange {
				alarms++
			}
			for i := len(xs) - tc.k; i < len(xs); i++ {
				xs[i] *= 0.9
			}
			if test, _ = Regress(samples(xs, 0), len(xs)-1, tc.k, tc.base, true, 0.05); test.Verdict == Regression {
				found++
			}
		}
		rate := float64(alarms) / n
		if rate < 0.035 || rate > 0.065 {
			t.Errorf("%s: %.1f%% false alarms at alpha 5%%", tc.name, rate*100)
		}
		if float64(found)/n < tc.power {
			t.Errorf("%s: a 10%% drop found in %.1f%%", tc.name, float64(found)/n*100)
		}
		t.Logf("%s: %.1f%% false alarms, a 10%% drop found in %.1f%%", tc.name, rate*100, float64(found)/n*100)
	}
}

func TestRegressOneAgainstOne(t *testing.T) {
	// 5% apart, each ±1% by its own interval: significant.
	test, err := Regress(samples([]float64{1000, 950}, 0.01), 1, 1, Baseline{Kind: "last", N: 1}, true, 0.05)
	if err != nil || test.Verdict != Regression || math.Abs(test.Change+0.05) > 1e-9 {
		t.Fatalf("%+v %v", test, err)
	}
	// 1% apart with ±2% each: not.
	if test, _ = Regress(samples([]float64{1000, 990}, 0.02), 1, 1, Baseline{Kind: "last", N: 1}, true, 0.05); test.Verdict != NoChange {
		t.Fatalf("%+v", test)
	}
	// Lower is better: a rise is the regression.
	if test, _ = Regress(samples([]float64{10, 12}, 0.01), 1, 1, Baseline{Kind: "last", N: 1}, false, 0.05); test.Verdict != Regression {
		t.Fatalf("%+v", test)
	}
	// Without intervals, one against one cannot be told.
	if _, err := Regress(samples([]float64{1000, 950}, 0), 1, 1, Baseline{Kind: "last", N: 1}, true, 0.05); err == nil {
		t.Fatal("one against one without intervals was tested")
	}
}

func TestParseBaseline(t *testing.T) {
	for s, want := range map[string]string{"last:5": "last:5", "first:10": "first:10", "3f2a9c1b,77ab": "3f2a9c1b,77ab"} {
		b, err := ParseBaseline(s)
		if err != nil || b.String() != want {
			t.Errorf("%s: %v %v", s, b, err)
		}
	}
	for _, s := range []string{"last:0", "last:x", "first:-1", "", ",", "mid:3"} {
		if _, err := ParseBaseline(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
