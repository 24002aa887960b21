package workload

import (
	"fmt"
	"math"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/telemetry"
)

// CheckMemory refuses n things of about each bytes, that label counts (a
// flag and its value: "--vus 99999999999"), which this machine's
// available memory cannot hold: in one line that says what they would
// take and how many can, before anything of them is allocated, so that a
// mistyped count is a line and exit 2, not Go's fatal error and its
// goroutine dump. Where the memory cannot be known (not Linux), it
// refuses nothing.
func CheckMemory(label string, n int, each int64, what string) error {
	avail, ok := telemetry.Available()
	if !ok {
		return nil
	}
	return checkMemory(label, n, each, what, avail)
}

// checkMemory is CheckMemory with avail bytes available. It divides, so
// that no count overflows.
func checkMemory(label string, n int, each int64, what string, avail int64) error {
	most := avail / max(each, 1)
	if int64(n) <= most {
		return nil
	}
	return exitcode.Userf("%s: %s %s would take about %s of memory (%s each), and this machine has %s available: at most %s",
		label, human.Thousands(float64(n)), what, human.Bytes(float64(n)*float64(each)), human.Bytes(float64(each)),
		human.Bytes(float64(avail)), human.Thousands(float64(most)))
}

// loaderBytes is about what a loader holds at once: its session, and the
// rows of the batch in hand with their encoding. An allowance.
const loaderBytes = 4 << 20

// CheckLoaders refuses a --loaders that is no count of loaders, or more
// than this machine's memory holds.
func CheckLoaders(n int) error {
	if n < 1 {
		return exitcode.Userf("--loaders must be at least 1, got %d", n)
	}
	return CheckMemory(fmt.Sprintf("--loaders %d", n), n, loaderBytes, "loaders, each with a session and the rows in hand,")
}

// Estimate is an estimate of seconds as a Duration, the longest one holds
// where it holds no more: estimates (BuildTime, RunTime) are made of flags
// that are checked only once the work begins.
func Estimate(seconds float64) time.Duration {
	if ns := seconds * float64(time.Second); ns < 1<<62 {
		return time.Duration(ns)
	}
	return time.Duration(math.MaxInt64)
}
