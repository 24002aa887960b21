package changepoint

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// repeat is the series the fixtures below write as list arithmetic,
// [50]*14 + [74] + [100]*15 and the like.
func repeat(runs ...float64) []float64 {
	var xs []float64
	for i := 0; i < len(runs); i += 2 {
		for range int(runs[i+1]) {
			xs = append(xs, runs[i])
		}
	}
	return xs
}

// TestPublished runs other implementations' fixtures of E-divisive with
// the permutation test. Only the series and their expected change points
// are taken from them. Where an implementation returns its points in
// the order found, they are sorted here.
//
// MongoDB: github.com/mongodb/signal-processing-algorithms, commit
// aec099a9696d17ccd1e85a357313614a01f859a2, tests/test_detection.py.
// Those run with pvalue=0.01 and 100 permutations (p = hits/101); here
// Alpha is 0.01 with the default 199.
//
// Otava: github.com/apache/otava, commit
// 1ceb1537a49d516cf6cef9a79bea6926002082f8,
// tests/change_point_divisive_test.py, SEQUENCE and CHANGE_POINTS_INDS,
// which test_permutation_test expects at max_pvalue=0.01 with 100
// permutations. The second change, at 8, splits a 9-point segment 3|6.
// Counting all 9! orders, 2/84 ≈ 0.024 of them split it as cleanly
// (three values first or last), so its exact permutation p-value is
// 0.024. No exact test finds it at 0.01, and Otava's does only by
// Monte Carlo luck (an expected 2.4 of its 100 shuffles reach the
// observed q̂, and it took hits/101). Here it is checked at 0.05, where
// it is found, and at 0.01, where only the first change is.
func TestPublished(t *testing.T) {
	otava := []float64{
		0.3, 2.4, 1.5, -0.9, -0.5,
		99.7, 98.3, 99.1,
		149.0, 149.7, 149.5, 149.1, 148.8, 150.0,
	}
	with := func(xs []float64, at map[int]float64) []float64 {
		xs = slices.Clone(xs)
		for i, v := range at {
			xs[i] = v
		}
		return xs
	}
	for _, c := range []struct {
		name  string
		xs    []float64
		alpha float64
		want  []int
	}{
		// test_random_ish_data: randint(1,50) ×20, randint(60,120) ×20,
		// randint(150,250) ×20.
		{"mongodb/random_ish_data", []float64{
			41, 18, 23, 3, 32, 11, 40, 13, 29, 48, 47, 35, 18, 21, 6, 2, 23, 3, 4, 7,
			120, 103, 102, 81, 71, 62, 115, 61, 108, 63, 70, 98, 65, 96, 64, 74, 70, 113, 90, 114,
			208, 196, 153, 150, 225, 179, 206, 165, 177, 151, 218, 217, 244, 245, 229, 195, 225, 229, 176, 250,
		}, 0.01, []int{20, 40}},
		{"mongodb/finds_simple_regression", repeat(50, 15, 100, 15), 0.01, []int{15}},
		{"mongodb/finds_ahead", repeat(50, 14, 74, 1, 100, 15), 0.01, []int{15}},
		{"mongodb/finds_behind", repeat(50, 14, 76, 1, 100, 15), 0.01, []int{14}},
		{"mongodb/finds_simple_regression2", with(repeat(50, 15, 100, 15), map[int]float64{2: 100}), 0.01, []int{15}},
		{"mongodb/regression_and_recovery", with(repeat(50, 15, 100, 15, 50, 15), map[int]float64{2: 100, 32: 100}), 0.01, []int{15, 33}},
		{"mongodb/two_regressions", with(repeat(50, 15, 100, 15, 150, 15), map[int]float64{2: 100}), 0.01, []int{15, 30}},
		{"mongodb/no_regressions", repeat(50, 30), 0.01, nil},
		{"otava/SEQUENCE", otava, 0.05, []int{5, 8}},
		{"otava/SEQUENCE at 0.01", otava, 0.01, []int{5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, err := Detect(c.xs, Options{Alpha: c.alpha})
			if err != nil {
				t.Fatal(err)
			}
			if got := indexes(ps); !slices.Equal(got, c.want) {
				t.Errorf("change points %v, want %v (%+v)", got, c.want, ps)
			}
			for _, p := range ps {
				if p.PValue > c.alpha || p.PValue < 1.0/200 {
					t.Errorf("point %d: p-value %v outside [1/200, %v]", p.Index, p.PValue, c.alpha)
				}
			}
		})
	}
}

// TestPublishedLong runs MongoDB's longer fixtures, which give only how
// many change points to expect: tests/data/long_series.json (expected
// in test_long_series) and tests/data/profiling/{small,medium}.json (in
// the files themselves), copied unchanged into testdata from the same
// commit as above. In medium, one candidate's exact p-value is close to
// 0.01, and 199 shuffles with Seed 0 put it at 0.015: the search stops
// there, with 11 of its 14 points. 999 shuffles settle it.
func TestPublishedLong(t *testing.T) {
	for _, c := range []struct {
		file         string
		permutations int
		want         int // -1: in the file
	}{
		{"mongodb-long_series.json", 0, 4},
		{"mongodb-small.json", 0, -1},
		{"mongodb-medium.json", 999, -1},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			var xs []float64
			want := c.want
			if want < 0 {
				var f struct {
					Series   []float64
					Expected int
				}
				err = json.Unmarshal(b, &f)
				xs, want = f.Series, f.Expected
			} else {
				err = json.Unmarshal(b, &xs)
			}
			if err != nil {
				t.Fatal(err)
			}
			ps, err := Detect(xs, Options{Alpha: 0.01, Permutations: c.permutations})
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != want {
				t.Errorf("%d change points %v, want %d", len(ps), indexes(ps), want)
			}
		})
	}
}

func indexes(ps []Point) []int {
	var is []int
	for _, p := range ps {
		is = append(is, p.Index)
	}
	return is
}
