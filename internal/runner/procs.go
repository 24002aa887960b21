package runner

import (
	"runtime"
	"slices"
	"sync"
)

// procs keeps GOMAXPROCS for the runs in progress in this process. The
// Go runtime's Ps are the process's, not a run's: a process that runs
// several at once (a test binary does) gives them the most any of them
// asked for, and gets back what it had before the first once the last
// ends. Each run setting its own and restoring what it found left the
// process at the wrong one for good: of two runs that overlapped, the
// first to end restored what the process had before both, and the
// second what the first had set.
var procs struct {
	sync.Mutex
	before int
	asked  []int // what the runs in progress asked for
}

// holdProcs asks for n Ps for a run, until release.
func holdProcs(n int) (release func()) {
	procs.Lock()
	defer procs.Unlock()
	if len(procs.asked) == 0 {
		procs.before = runtime.GOMAXPROCS(0)
	}
	procs.asked = append(procs.asked, n)
	runtime.GOMAXPROCS(slices.Max(procs.asked))
	return func() {
		procs.Lock()
		defer procs.Unlock()
		i := slices.Index(procs.asked, n)
		procs.asked = slices.Delete(procs.asked, i, i+1)
		if len(procs.asked) == 0 {
			runtime.GOMAXPROCS(procs.before)
		} else {
			runtime.GOMAXPROCS(slices.Max(procs.asked))
		}
	}
}
