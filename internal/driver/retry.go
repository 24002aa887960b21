package driver

import (
	"math/rand/v2"
	"time"
)

// DefaultMaxRetries is Config.MaxRetries where it is zero, and NoRetries
// the value that retries nothing.
const (
	DefaultMaxRetries = 10
	NoRetries         = -1
)

// Backoff is how long a VU waits before it retries a transaction that the
// target said was worth another try: capped exponential backoff with full
// jitter, a wait drawn uniformly below min(Max, Base·2^n) before the
// (n+1)-th retry. Retrying at once runs the transaction again into the
// conflict it just lost, while the transactions it lost to still hold
// their locks or certify; a wait that grows spreads the contenders out,
// and the jitter keeps them from waking together. The zero Backoff
// retries at once.
type Backoff struct {
	Base, Max time.Duration
}

// DefaultBackoff is what a run that gives none waits: a few milliseconds,
// about an OLTP transaction's own, at first, at most a second.
var DefaultBackoff = Backoff{Base: 5 * time.Millisecond, Max: time.Second}

// wait is the wait before the retry after n retries.
func (b Backoff) wait(n int64) time.Duration {
	if b.Base <= 0 {
		return 0
	}
	ceiling := b.Max
	if n < 62 && b.Base<<n > 0 && (ceiling <= 0 || b.Base<<n < ceiling) {
		ceiling = b.Base << n
	}
	return rand.N(ceiling) + 1
}
