package parts

import (
	"context"
	"testing"
	"time"
)

// TestOffset: a server clock 3.2 ms ahead, reached over round trips whose
// way out and way back differ and vary: the offset measured is within its
// uncertainty of the truth, and comes from the shortest round trip.
func TestOffset(t *testing.T) {
	const skew = 3200 * time.Microsecond
	now := time.Date(2026, 11, 25, 18, 31, 2, 0, time.UTC)
	local := func() time.Time { return now }
	// The way out and back of each round trip, in µs: the shortest (40+90)
	// is the fifth.
	trips := [][2]int{{900, 300}, {250, 700}, {120, 400}, {500, 80}, {40, 90}, {300, 300}, {1000, 20}, {70, 200}}
	i := 0
	server := func(context.Context) (int64, error) {
		now = now.Add(time.Duration(trips[i][0]) * time.Microsecond)
		at := now.Add(skew).UnixMicro()
		now = now.Add(time.Duration(trips[i][1]) * time.Microsecond)
		i++
		return at, nil
	}
	c, rtt, err := measure(context.Background(), local, server)
	if err != nil {
		t.Fatal(err)
	}
	if i != rounds {
		t.Errorf("%d round trips, want %d", i, rounds)
	}
	if rtt != 130*time.Microsecond || c.Uncertainty != 65*time.Microsecond {
		t.Errorf("rtt %v, uncertainty %v; want the shortest round trip's, 130µs and 65µs", rtt, c.Uncertainty)
	}
	if off := c.Offset - skew; off > c.Uncertainty || -off > c.Uncertainty {
		t.Errorf("offset %v, the server is %v ahead: off by %v, more than the uncertainty %v", c.Offset, skew, off, c.Uncertainty)
	}
	// The estimate is exact up to the asymmetry: (40−90)/2 µs.
	if want := skew - 25*time.Microsecond; c.Offset != want {
		t.Errorf("offset %v, want %v", c.Offset, want)
	}
}
