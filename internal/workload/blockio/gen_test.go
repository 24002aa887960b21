package blockio

import "testing"

func TestPermIsAPermutation(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 1000, 1024, 4097} {
		p := newPerm(n, 7)
		seen := make([]bool, n)
		for i := range n {
			v := p.at(i)
			if v >= n || seen[v] {
				t.Fatalf("n=%d: at(%d) = %d, out of range or repeated", n, i, v)
			}
			seen[v] = true
		}
	}
}

// Neighbouring keys must not be neighbours on disk: the method reads each
// key of a range from a different, random block.
func TestPermScattersNeighbours(t *testing.T) {
	const n = 1 << 15
	p := newPerm(n, 7)
	pos := make([]int64, n)
	for i := range uint64(n) {
		pos[p.at(i)] = int64(i)
	}
	near := 0
	for k := 1; k < n; k++ {
		if d := pos[k] - pos[k-1]; d >= -8 && d <= 8 {
			near++
		}
	}
	// Random positions land within 8 of each other 17 times in 32768.
	if near > 100 {
		t.Errorf("%d of %d neighbouring keys sit within 8 rows of each other", near, n)
	}
	if q := newPerm(n, 8); q.at(0) == p.at(0) && q.at(1) == p.at(1) && q.at(2) == p.at(2) {
		t.Errorf("seeds 7 and 8 give the same order")
	}
}

func TestParseScale(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"32768", 32768}, {"64MB", 8192}, {"8GB", 1 << 20}, {"1.5MB", 192}} {
		got, err := parseScale(c.in, 8192)
		if err != nil || got != c.want {
			t.Errorf("parseScale(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	if _, err := parseScale("lots", 8192); err == nil {
		t.Errorf("parseScale(lots) took it")
	}
}

func TestIndexShape(t *testing.T) {
	for _, c := range []struct {
		keys, pages, perLeaf int64
		height               int
	}{
		{32768, 91, 365, 2},     // 90 leaves and a root
		{1 << 20, 2883, 367, 3}, // 2858 leaves, 8 internal pages, a root
		{100, 1, 100, 1},        // the root is the leaf
	} {
		perLeaf, height := indexShape(c.keys, c.pages)
		if perLeaf < c.perLeaf-2 || perLeaf > c.perLeaf+2 || height != c.height {
			t.Errorf("indexShape(%d, %d) = %d per leaf, height %d; want about %d, %d", c.keys, c.pages, perLeaf, height, c.perLeaf, c.height)
		}
	}
}
