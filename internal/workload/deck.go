package workload

// Deck deals cards in shuffled order and reshuffles when it is spent, as
// TPC-C clause 5.2.4.2 does for the transaction mix. Over every full deck
// the proportions are exact and only the order is random, so a run of ten
// thousand transactions meets clause 9.2's narrow bounds (0.9-1.1% for a
// 1% event) by construction instead of by luck: drawing each event
// independently would miss them about half the time at that length.
//
// A deck is a value of a byte a card and holds no random source: the
// caller passes one to Deal, so ten thousand terminals' decks cost about
// a hundred bytes each, and a deck can be dealt with whichever source
// draws the inputs it decides.
type Deck struct {
	cards []uint8
	pos   int
}

// NewDeck makes a deck holding counts[i] cards of kind i; there are at
// most 256 kinds.
func NewDeck(counts ...int) Deck {
	if len(counts) > 256 {
		panic("workload: a deck of more than 256 kinds")
	}
	var d Deck
	for kind, n := range counts {
		for range n {
			d.cards = append(d.cards, uint8(kind))
		}
	}
	return d
}

// Deal returns the next card's kind, shuffling with r when a deck begins.
func (d *Deck) Deal(r *Rand) int {
	if d.pos == 0 {
		for i := len(d.cards) - 1; i > 0; i-- {
			j := r.Int(0, i)
			d.cards[i], d.cards[j] = d.cards[j], d.cards[i]
		}
	}
	c := d.cards[d.pos]
	d.pos = (d.pos + 1) % len(d.cards)
	return int(c)
}
