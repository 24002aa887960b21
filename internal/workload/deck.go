package workload

// Deck deals cards in shuffled order and reshuffles when it is spent, as
// TPC-C clause 5.2.4.2 does for the transaction mix. Over every full deck
// the proportions are exact and only the order is random, so a run of ten
// thousand transactions meets clause 9.2's narrow bounds (0.9-1.1% for a
// 1% event) by construction instead of by luck: drawing each event
// independently would miss them about half the time at that length.
type Deck struct {
	r     *Rand
	cards []int
	pos   int
}

// NewDeck makes a deck holding counts[i] cards of kind i.
func NewDeck(r *Rand, counts ...int) *Deck {
	d := &Deck{r: r}
	for kind, n := range counts {
		for range n {
			d.cards = append(d.cards, kind)
		}
	}
	return d
}

// Deal returns the next card's kind.
func (d *Deck) Deal() int {
	if d.pos == 0 {
		for i := len(d.cards) - 1; i > 0; i-- {
			j := d.r.Int(0, i)
			d.cards[i], d.cards[j] = d.cards[j], d.cards[i]
		}
	}
	c := d.cards[d.pos]
	d.pos = (d.pos + 1) % len(d.cards)
	return c
}
