package parts

import (
	"context"
	"time"
)

// Clock is how this process's clock stands to the target database's:
// server = local + Offset, known to within Uncertainty.
type Clock struct{ Offset, Uncertainty time.Duration }

// rounds is how many round trips an offset is measured over: the one
// that took least says the most.
const rounds = 8

// measure is NTP's estimate over rounds round trips: for each, local
// times t0 and t1 around server, the server's clock in µs, make the
// offset server − (t0+t1)/2, exact when the way out took as long as the
// way back and off by at most half the round trip otherwise. It keeps
// the sample of the shortest round trip, whose rtt it returns too; its
// uncertainty is half that.
func measure(ctx context.Context, local func() time.Time, server func(context.Context) (int64, error)) (c Clock, rtt time.Duration, err error) {
	best := time.Duration(-1)
	for range rounds {
		t0 := local()
		us, err := server(ctx)
		if err != nil {
			return Clock{}, 0, err
		}
		t1 := local()
		r := t1.Sub(t0)
		if best >= 0 && r >= best {
			continue
		}
		best = r
		mid := t0.Add(r / 2)
		c = Clock{Offset: time.UnixMicro(us).Sub(mid), Uncertainty: r / 2}
	}
	return c, best, nil
}
