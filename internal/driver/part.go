package driver

import (
	"strconv"
	"time"
)

// Part is one process's share of a run split over several (--part i/n):
// Index is 1-based, and the zero value is the whole run.
type Part struct{ Index, Of int }

// String is "2/3", and "" for the whole run.
func (p Part) String() string {
	if p.Of == 0 {
		return ""
	}
	return strconv.Itoa(p.Index) + "/" + strconv.Itoa(p.Of)
}

// Schedule is a split run's common instants, on the local clock: the
// run's clock starts at Start, the ramp-up ends at Open, the window
// closes at Close; every holder stays still for Hold at each edge.
type Schedule struct {
	Start, Open, Close time.Time
	Hold               time.Duration
}
