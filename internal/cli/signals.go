package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// onSignals handles Ctrl-C and SIGTERM in steps: the n-th signal runs
// steps[n-1], and one more than there are steps exits at once with status
// 130. The returned stop ends the handling.
func onSignals(stderr io.Writer, steps ...func(sig os.Signal)) (stop func()) {
	ch := make(chan os.Signal, len(steps)+1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case sig := <-ch:
				if n == len(steps) {
					fmt.Fprintln(stderr, "\ndbrig: quitting at once")
					os.Exit(130)
				}
				steps[n](sig)
			}
		}
	}()
	return func() { signal.Stop(ch); close(done); wg.Wait() }
}

// signalContext is cancelled by the first Ctrl-C or SIGTERM, so a command
// can stop cleanly and keep what it has. A second one exits at once.
func signalContext(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := onSignals(stderr, func(os.Signal) {
		fmt.Fprintln(stderr, "\ndbrig: stopping; press Ctrl-C again to quit at once")
		cancel()
	})
	return ctx, func() { stop(); cancel() }
}

// runSignals is a run's handling: the first Ctrl-C or SIGTERM cancels ctx,
// which ends the measured window and keeps the result; the second cancels
// hard, ctx's parent, and closes quit, so that the run stops waiting for
// anything (virtual users, a server that does not answer, the audit) and
// writes what it has; a third exits at once.
func runSignals(stderr io.Writer) (ctx, hard context.Context, stop func()) {
	hard, quit := context.WithCancel(context.Background())
	ctx, cancel := context.WithCancel(hard)
	end := onSignals(stderr, func(os.Signal) {
		fmt.Fprintln(stderr, "\ndbrig: stopping: the window ends now and the result is kept; press Ctrl-C again to stop waiting and write what the run has")
		cancel()
	}, func(os.Signal) {
		fmt.Fprintln(stderr, "\ndbrig: writing what the run has; press Ctrl-C again to quit at once")
		quit()
	})
	return ctx, hard, func() { end(); cancel(); quit() }
}
