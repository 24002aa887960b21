package workload

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestRandIntBounds(t *testing.T) {
	r := NewRand(1, 2)
	for _, c := range []struct{ lo, hi int }{{0, 0}, {1, 10}, {-5, 5}, {1, 100000}, {0, 1 << 40}} {
		seen := map[int]bool{}
		for range 20000 {
			v := r.Int(c.lo, c.hi)
			if v < c.lo || v > c.hi {
				t.Fatalf("Int(%d, %d) = %d", c.lo, c.hi, v)
			}
			seen[v] = true
		}
		if n := c.hi - c.lo + 1; n <= 10 && len(seen) != n {
			t.Errorf("Int(%d, %d) hit %d of %d values", c.lo, c.hi, len(seen), n)
		}
	}
}

func TestRandIntUniform(t *testing.T) {
	r := NewRand(3, 4)
	const n, draws = 10, 200000
	var counts [n]int
	for range draws {
		counts[r.Int(0, n-1)]++
	}
	for v, c := range counts {
		if math.Abs(float64(c)-draws/n) > 0.05*draws/n {
			t.Errorf("value %d drawn %d times, want about %d", v, c, draws/n)
		}
	}
}

func TestNURand(t *testing.T) {
	for _, c := range []struct {
		name       string
		a, x, y, k int
	}{
		{"c_last", 255, 0, 999, 123},
		{"c_id", 1023, 1, 3000, 259},
		{"ol_i_id", 8191, 1, 100000, 7911},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewRand(5, 6)
			const draws = 300000
			counts := make([]int, c.y-c.x+1)
			for range draws {
				v := r.NURand(c.a, c.x, c.y, c.k)
				if v < c.x || v > c.y {
					t.Fatalf("NURand(%d, %d, %d, %d) = %d", c.a, c.x, c.y, c.k, v)
				}
				counts[v-c.x]++
			}
			// Uniform draws would put about 1% of the draws on the
			// hottest 1% of values; NURand puts several times that there.
			slices.Sort(counts)
			slices.Reverse(counts)
			top := 0
			for _, n := range counts[:len(counts)/100] {
				top += n
			}
			if share := float64(top) / draws; share < 0.03 {
				t.Errorf("hottest 1%% of values got %.1f%% of draws; want far above 1%%", 100*share)
			}
		})
	}
}

func TestAString(t *testing.T) {
	r := NewRand(7, 8)
	lens := map[int]int{}
	chars := map[rune]int{}
	for range 20000 {
		s := aString(r, 3, 12)
		if len(s) < 3 || len(s) > 12 {
			t.Fatalf("AString(3, 12) has length %d", len(s))
		}
		lens[len(s)]++
		for _, ch := range s {
			if !strings.ContainsRune(alnum, ch) {
				t.Fatalf("AString gave %q, not alphanumeric", s)
			}
			chars[ch]++
		}
	}
	if len(lens) != 10 {
		t.Errorf("AString(3, 12) made %d distinct lengths, want 10", len(lens))
	}
	if len(chars) != 62 {
		t.Errorf("AString used %d distinct characters, want 62", len(chars))
	}
	// Every position of the per-draw expansion must be uniform, not just
	// the first: check the last of a draw's eight characters.
	var last [62]int
	for range 62000 {
		s := aString(r, 8, 8)
		last[strings.IndexByte(alnum, s[7])]++
	}
	for i, n := range last {
		if n < 800 || n > 1200 {
			t.Errorf("8th character %q drawn %d times, want about 1000", alnum[i], n)
		}
	}
	if s := aString(r, 0, 0); s != "" {
		t.Errorf("AString(0, 0) = %q", s)
	}
	if s := aString(r, 5000, 5000); len(s) != 5000 {
		t.Errorf("AString(5000, 5000) has length %d", len(s))
	}
	if s := string(r.AppendAString([]byte("ab"), 3, 3)); len(s) != 5 || s[:2] != "ab" {
		t.Errorf("AppendAString to \"ab\" gave %q", s)
	}
}

func TestNString(t *testing.T) {
	r := NewRand(11, 12)
	for range 5000 {
		s := nString(r, 16, 16)
		if len(s) != 16 || strings.Trim(s, "0123456789") != "" {
			t.Fatalf("NString(16, 16) = %q", s)
		}
	}
}

func TestAStringWith(t *testing.T) {
	r := NewRand(13, 14)
	starts := map[int]bool{}
	for range 5000 {
		s := aStringWith(r, 26, 50, "ORIGINAL")
		if len(s) < 26 || len(s) > 50 {
			t.Fatalf("length %d", len(s))
		}
		i := strings.Index(s, "ORIGINAL")
		if i < 0 {
			t.Fatalf("%q lacks ORIGINAL", s)
		}
		starts[i] = true
	}
	if !starts[0] || !starts[42] {
		t.Errorf("ORIGINAL never at the first or last possible position")
	}
}

func TestMoney(t *testing.T) {
	r := NewRand(15, 16)
	for range 10000 {
		m := r.Money(100, 500000)
		if m < 1 || m > 5000 {
			t.Fatalf("Money(100, 500000) = %v", m)
		}
		if c := m * 100; math.Abs(c-math.Round(c)) > 1e-6 {
			t.Fatalf("Money gave %v, not whole cents", m)
		}
	}
}

func TestExp(t *testing.T) {
	r := NewRand(17, 18)
	const mean, draws = 12.0, 200000
	sum := 0.0
	for range draws {
		v := r.Exp(mean)
		if v < 0 || v > 10*mean {
			t.Fatalf("Exp(%v) = %v", mean, v)
		}
		sum += v
	}
	if got := sum / draws; math.Abs(got-mean) > 0.02*mean {
		t.Errorf("mean %v, want about %v", got, mean)
	}
}

func TestPerm(t *testing.T) {
	r := NewRand(19, 20)
	p := r.Perm(3000)
	if slices.Equal(p, r.Perm(3000)) {
		t.Errorf("two permutations are equal")
	}
	moved := 0
	for i, v := range p {
		if v != i+1 {
			moved++
		}
	}
	if moved < 2900 {
		t.Errorf("only %d of 3000 moved", moved)
	}
	slices.Sort(p)
	for i, v := range p {
		if v != i+1 {
			t.Fatalf("Perm(3000) is not a permutation of 1..3000")
		}
	}
	if len(r.Perm(0)) != 0 {
		t.Errorf("Perm(0) not empty")
	}
}

func TestDeterminism(t *testing.T) {
	draw := func(r *Rand) []any {
		return []any{r.Int(1, 1000), r.NURand(255, 0, 999, 42), aString(r, 5, 30), nString(r, 4, 4),
			r.Money(1, 999999), r.Exp(10), r.Perm(10), aStringWith(r, 26, 50, "ORIGINAL"), r.Uint64()}
	}
	a, b, c := NewRand(21, 22), NewRand(21, 22), NewRand(21, 23)
	for range 100 {
		x, y, z := draw(a), draw(b), draw(c)
		for i := range x {
			if !equal(x[i], y[i]) {
				t.Fatalf("same seeds: draw %d gave %v and %v", i, x[i], y[i])
			}
		}
		if equal(x[2], z[2]) && equal(x[8], z[8]) {
			t.Fatalf("different seeds gave the same draws")
		}
	}
	// Reseeding restarts the sequence.
	a.Seed(21, 22)
	b = NewRand(21, 22)
	if a.Uint64() != b.Uint64() {
		t.Errorf("Seed does not restart the sequence")
	}
}

// TestSequenceFixed pins the first draws, so a change of generator or of a
// derivation, which would change every database built, cannot pass unseen.
func TestSequenceFixed(t *testing.T) {
	r := NewRand(1, 1)
	got := []any{r.Int(1, 100), aString(r, 10, 10), nString(r, 6, 6)}
	want := []any{100, "rY0XV6aSub", "934059"}
	for i := range want {
		if !equal(got[i], want[i]) {
			t.Errorf("draw %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func equal(a, b any) bool {
	if x, ok := a.([]int); ok {
		return slices.Equal(x, b.([]int))
	}
	return a == b
}

func TestMix(t *testing.T) {
	seen := map[uint64]bool{}
	for a := range uint64(4) {
		for b := range uint64(1000) {
			seen[Mix(a, b)] = true
		}
	}
	if len(seen) != 4000 {
		t.Errorf("Mix collided: %d distinct of 4000", len(seen))
	}
}

func BenchmarkAString(b *testing.B) {
	for _, n := range []int{24, 400} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			r := NewRand(1, 2)
			b.SetBytes(int64(n))
			var buf []byte
			for b.Loop() {
				buf = r.AppendAString(buf[:0], n, n)
			}
		})
	}
}

func BenchmarkInt(b *testing.B) {
	r := NewRand(1, 2)
	s := 0
	for b.Loop() {
		s += r.Int(1, 100000)
	}
	_ = s
}

// TestRunSeedReadsBack: a run's seed in a config, written as JSON and
// read back as a document's config is (numbers float64), is the seed.
func TestRunSeedReadsBack(t *testing.T) {
	seed := RunSeed()
	b, err := json.Marshal(map[string]any{"seed": seed})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if got := uint64(m["seed"].(float64)); got != seed || seed == 0 {
		t.Errorf("seed %d read back as %d", seed, got)
	}
}

// aString, nString and aStringWith are the draws as strings.
func aString(r *Rand, lo, hi int) string { return string(r.AppendAString(nil, lo, hi)) }
func nString(r *Rand, lo, hi int) string { return string(r.AppendNString(nil, lo, hi)) }
func aStringWith(r *Rand, lo, hi int, mark string) string {
	return string(r.AppendAStringWith(nil, lo, hi, mark))
}
