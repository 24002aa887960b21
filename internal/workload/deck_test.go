package workload

import (
	"slices"
	"testing"
)

func TestDeckProportionsAndShuffle(t *testing.T) {
	d := NewDeck(NewRand(1, 2), 45, 43, 4, 4, 4)
	var first []int
	for round := range 50 {
		var got [5]int
		var order []int
		for range 100 {
			c := d.Deal()
			got[c]++
			order = append(order, c)
		}
		if got != [5]int{45, 43, 4, 4, 4} {
			t.Fatalf("round %d dealt %v, want exactly 45/43/4/4/4", round, got)
		}
		if round == 0 {
			first = order
		} else if slices.Equal(order, first) {
			t.Fatalf("round %d dealt the same order as round 0: not reshuffled", round)
		}
	}
}
