package parts

import (
	"testing"
	"time"
)

// TestTimeoutReason: the parts that never came, those that came but were
// not ready, and those ready, each named; a leader that did not start a
// run every part was ready for is named too.
func TestTimeoutReason(t *testing.T) {
	r := run{parts: 4, leader: 1, created: 1_000_000, deadline: 1_000_000 + (2 * time.Minute).Microseconds()}
	for _, c := range []struct {
		ms   []member
		want string
	}{
		{[]member{{part: 1, ready: 5}, {part: 2, ready: 6}, {part: 3, ready: 7}},
			"part 4 of 4 did not arrive within --part-timeout 2m0s (parts 1, 2, 3 ready)"},
		{[]member{{part: 1, ready: 5}, {part: 3}},
			"parts 2, 4 of 4 did not arrive and part 3 was not ready within --part-timeout 2m0s (part 1 ready)"},
		{[]member{{part: 1}, {part: 2}, {part: 3}, {part: 4}},
			"parts 1, 2, 3, 4 of 4 were not ready within --part-timeout 2m0s (none ready)"},
		{[]member{{part: 1, ready: 1}, {part: 2, ready: 1}, {part: 3, ready: 1}, {part: 4, ready: 1}},
			"every part was ready, but part 1, which leads, did not start the run within --part-timeout 2m0s (parts 1, 2, 3, 4 ready)"},
	} {
		if got := timeoutReason(r, c.ms); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
