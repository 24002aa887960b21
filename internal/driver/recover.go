package driver

import "github.com/dbrig/dbrig/internal/exitcode"

// recovered, deferred first thing after wg.Done at the top of each
// goroutine that runs a workload's code (a VU's, a pooled session's), ends
// the run with a panic there (abort: the run's), which Run then returns as
// an *exitcode.Panic, where it would have crashed the process with a
// trace. It runs after the goroutine's other deferred calls, so the VU
// still leaves the window's edges and closes. It is exitcode.Recover
// itself, as recover works only in the function deferred.
var recovered = exitcode.Recover
