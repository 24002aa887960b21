package blockio

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/workload"
)

// minScale is the fewest blocks a table may have: fewer would fit any
// cache and leave too few ranges to pick from.
const minScale = 1024

// parseScale reads --scale: a count of blocks, or a size that many blocks
// of blockSize make.
func parseScale(s string, blockSize int) (int64, error) {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		return n, nil
	}
	size, err := human.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("--scale %q: want a number of blocks or a size such as 64MB or 8GB", s)
	}
	return size / int64(blockSize), nil
}

// perm is a pseudo-random permutation of 0..n-1, computable at any index
// on its own, so that loaders can each make their own range of rows: a
// four-round Feistel network over the smallest even power of two that
// holds n, walking the cycle until the value falls below n.
type perm struct {
	n     uint64
	half  uint
	mask  uint64
	round [4]uint64
}

func newPerm(n uint64, seed uint64) perm {
	b := uint(bits.Len64(n - 1))
	b += b & 1
	if b < 2 {
		b = 2
	}
	p := perm{n: n, half: b / 2, mask: 1<<(b/2) - 1}
	for i := range p.round {
		p.round[i] = workload.Mix(seed, uint64(i))
	}
	return p
}

func (p perm) at(i uint64) uint64 {
	for {
		l, r := i>>p.half, i&p.mask
		for _, k := range p.round {
			l, r = r, l^(workload.Mix(k, r)&p.mask)
		}
		i = l<<p.half | r
		if i < p.n {
			return i
		}
	}
}

// tableSeed is the seed of table i's order: each table is a copy of the
// others in an order of its own.
func tableSeed(seed uint64, table int) uint64 { return workload.Mix(seed, uint64(table)) }

// rows yields a table's rows pos in [from, to): the key at pos is the
// permutation's, so that loading by pos lays the keys out in random order.
type rows struct {
	p        perm
	pos, to  int64
	filler   string
	values   []any
	key, num int64
}

func newRows(p perm, from, to int64, filler string) *rows {
	r := &rows{p: p, pos: from - 1, to: to, filler: filler}
	r.values = []any{int64(0), int64(0), int64(0), filler, filler, filler, filler, filler, filler, filler, filler}
	return r
}

// columns are the loaded columns, in the order of rows' values.
var columns = []string{"pos", "key", "n", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"}

func (r *rows) Next() bool {
	r.pos++
	return r.pos < r.to
}

func (r *rows) Values() ([]any, error) {
	key := int64(r.p.at(uint64(r.pos))) + 1
	r.values[0], r.values[1], r.values[2] = r.pos+1, key, key
	return r.values, nil
}

func (r *rows) Err() error { return nil }

// indexShape is a b-tree's keys per leaf and height (levels, the leaf's
// included) as its page count implies: a tree built from sorted keys packs
// its leaves evenly, and each level above holds one entry per page below.
func indexShape(keys, pages int64) (perLeaf int64, height int) {
	leaves := max(pages, 1)
	for range 4 {
		perLeaf = max((keys+leaves-1)/leaves, 2)
		internal, n := int64(0), leaves
		height = 1
		for n > 1 {
			n = (n + perLeaf - 1) / perLeaf
			internal += n
			height++
		}
		leaves = max(pages-internal, 1)
	}
	return perLeaf, height
}
