package workload

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"
)

// Rand is a deterministic, non-thread-safe random source with the draws
// the TPC-C specification uses (clauses 2.1.6 and 4.3.2.2). The same two
// seeds give the same sequence on every platform and Go version, because
// the generator (PCG-DXSM) and every derivation here are fixed.
type Rand struct {
	src rand.PCG
}

// NewRand returns a Rand seeded with s1 and s2. Seeds that differ in few
// bits give unrelated sequences only if the caller mixes them first; see
// Mix.
func NewRand(s1, s2 uint64) *Rand {
	r := &Rand{}
	r.src.Seed(s1, s2)
	return r
}

// Seed restarts r as if it were NewRand(s1, s2).
func (r *Rand) Seed(s1, s2 uint64) { r.src.Seed(s1, s2) }

// Uint64 returns 64 uniformly random bits.
func (r *Rand) Uint64() uint64 { return r.src.Uint64() }

// Float64 returns a uniform value in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.src.Uint64()>>11) * 0x1p-53 }

// Int returns a uniform integer in [lo, hi], both inclusive.
func (r *Rand) Int(lo, hi int) int {
	if hi < lo {
		panic("workload: Rand.Int with hi < lo")
	}
	return lo + int(r.below(uint64(hi-lo)+1))
}

// below returns a uniform value in [0, n) by Lemire's multiply-and-reject,
// which needs a second draw only with probability n/2^64.
func (r *Rand) below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.src.Uint64(), n)
		}
	}
	return hi
}

// NURand is the non-uniform random function of clause 2.1.6:
// (((random(0, a) | random(x, y)) + c) % (y - x + 1)) + x.
func (r *Rand) NURand(a, x, y, c int) int {
	return ((r.Int(0, a)|r.Int(x, y))+c)%(y-x+1) + x
}

// Money returns a uniform amount of whole cents in [lo, hi] cents, in units
// (Money(100, 500000) is 1.00 to 5000.00).
func (r *Rand) Money(lo, hi int) float64 { return float64(r.Int(lo, hi)) / 100 }

// Exp returns an exponentially distributed value with the given mean,
// -ln(U)*mean, truncated at 10 times the mean as clause 5.2.5.4 allows.
func (r *Rand) Exp(mean float64) float64 {
	// 1-U lies in (0, 1], so the logarithm is finite.
	v := -math.Log(1-r.Float64()) * mean
	return min(v, 10*mean)
}

// Perm returns a random permutation of 1..n.
func (r *Rand) Perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i + 1
	}
	for i := n - 1; i > 0; i-- {
		j := int(r.below(uint64(i) + 1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

const (
	alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	// alnumPerDraw characters come from one 64-bit draw, read as base-62
	// digits of a fraction: the eighth is still uniform to within 1e-4.
	alnumPerDraw = 8
	// digitsPerDraw is the same for base 10: the sixteenth digit is uniform
	// to within 1e-3.
	digitsPerDraw = 16
)

var alnumTable, digitTable = func() (a, d [64]byte) {
	copy(a[:], alnum)
	copy(d[:], "0123456789")
	return
}()

// AppendAString appends a random alphanumeric string ([0-9A-Za-z]) whose
// length is uniform in [lo, hi] to dst: the "random a-string" of clause
// 4.3.2.2. Appended to a buffer of the caller's, as a loader writes it on
// at once, a string costs no allocation of its own.
func (r *Rand) AppendAString(dst []byte, lo, hi int) []byte {
	dst, b := grow(dst, r.Int(lo, hi))
	r.fill(b, &alnumTable, 62, alnumPerDraw)
	return dst
}

// AppendNString appends a random string of decimal digits whose length is
// uniform in [lo, hi] to dst: the "random n-string" of clause 4.3.2.2.
func (r *Rand) AppendNString(dst []byte, lo, hi int) []byte {
	dst, b := grow(dst, r.Int(lo, hi))
	r.fill(b, &digitTable, 10, digitsPerDraw)
	return dst
}

// AppendAStringWith is AppendAString with mark written over the string at
// a uniformly random position, so its length stays in [lo, hi] (lo must be
// at least len(mark)). TPC-C uses it for the "ORIGINAL" rows of clause
// 4.3.3.1.
func (r *Rand) AppendAStringWith(dst []byte, lo, hi int, mark string) []byte {
	if lo < len(mark) {
		panic("workload: Rand.AppendAStringWith with lo < len(mark)")
	}
	dst, b := grow(dst, r.Int(lo, hi))
	r.fill(b, &alnumTable, 62, alnumPerDraw)
	copy(b[r.Int(0, len(b)-len(mark)):], mark)
	return dst
}

// grow extends dst by n bytes, returning it and the new bytes.
func grow(dst []byte, n int) (all, added []byte) {
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	return dst, dst[at:]
}

// fill writes uniform characters from set[:k] into b, per characters from
// each draw: each character is the integer part of the fraction times k,
// and the remaining fraction feeds the next. Two draws are expanded side
// by side, as the multiplications of one draw form a chain.
func (r *Rand) fill(b []byte, set *[64]byte, k uint64, per int) {
	for len(b) >= 2*per {
		x, y := r.src.Uint64(), r.src.Uint64()
		for i := 0; i < per; i++ {
			hx, lx := bits.Mul64(x, k)
			hy, ly := bits.Mul64(y, k)
			b[2*i] = set[hx&63]
			b[2*i+1] = set[hy&63]
			x, y = lx, ly
		}
		b = b[2*per:]
	}
	for len(b) > 0 {
		x := r.src.Uint64()
		m := min(per, len(b))
		for i := range b[:m] {
			hi, lo := bits.Mul64(x, k)
			b[i] = set[hi&63]
			x = lo
		}
		b = b[m:]
	}
}

// Mix hashes a and b into one well-spread 64-bit value, for deriving
// unrelated seeds from small keys such as (table, warehouse, district).
// For a fixed a it is a bijection of b, so distinct keys never collide.
func Mix(a, b uint64) uint64 { return splitmix(a ^ splitmix(b+0x9e3779b97f4a7c15)) }

// RunSeed is a new run's seed, from the clock, in 53 bits: a document's
// config holds it exactly when read back from JSON (numbers are float64),
// and it fits a signed 64-bit column.
func RunSeed() uint64 { return uint64(time.Now().UnixNano()) & (1<<53 - 1) }

// splitmix is the SplitMix64 finalizer, a bijective bit mixer.
func splitmix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
