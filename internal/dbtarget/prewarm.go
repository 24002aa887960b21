package dbtarget

import (
	"context"
	"fmt"
	"sort"
)

// Residency is how much of a database's relations sits in the server's
// buffer cache.
type Residency struct {
	// Relations counts the tables, indexes and other relations measured.
	Relations int
	// Blocks is their size in blocks; Resident, how many of those blocks
	// are in the buffer cache.
	Blocks, Resident int64
	// Fraction is Resident/Blocks, 0 when there are no blocks.
	Fraction float64
}

func (r Residency) String() string {
	return fmt.Sprintf("%d of %d blocks resident in shared buffers (%.1f%%), %d relations",
		r.Resident, r.Blocks, 100*r.Fraction, r.Relations)
}

// Prewarmer is a Target that can load its whole database into the
// server's buffer cache before a run, the analogue of Oracle's Force Full
// Cache. A kind whose targets implement it says so in Opener.Prewarms.
type Prewarmer interface {
	// Prewarm loads every relation and measures how much of it is
	// resident. When the cache is smaller than the data the fraction says
	// so; that is a measurement, not an error.
	Prewarm(ctx context.Context) (Residency, error)
}

// CanPrewarm reports whether targets of kind implement Prewarmer.
func CanPrewarm(kind string) bool {
	for _, o := range openers {
		if o.Kind == kind {
			return o.Prewarms
		}
	}
	return false
}

// KindOf names the kind of target that accepts url, "" when none does.
func KindOf(url string) string {
	o, _ := lookup(url)
	return o.Kind
}

// Prewarming names the kinds whose targets can prewarm, for messages.
func Prewarming() []string {
	var kinds []string
	for _, o := range openers {
		if o.Prewarms {
			kinds = append(kinds, o.Kind)
		}
	}
	sort.Strings(kinds)
	return kinds
}
