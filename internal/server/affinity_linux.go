package server

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// ClientPin is dbrig's own process kept off a confined server's CPUs, so
// that the client does not take the server's CPU time and the server's
// CPUs are the machine being measured.
type ClientPin struct {
	// CPUs are the client's CPUs while pinned; "" when it was left alone.
	CPUs string
	// Note says why the client was left alone, for the reader of a result.
	Note string
	was  unix.CPUSet
}

// PinClient moves every thread of this process onto the online CPUs that
// are neither the server's nor outside the process's affinity. Where none
// are left (the server has every CPU), nothing moves and Note says so.
func PinClient(serverCPUs string) (*ClientPin, error) {
	server, err := parseCPUList(serverCPUs)
	if err != nil {
		return nil, err
	}
	online, err := OnlineCPUs()
	if err != nil {
		return nil, err
	}
	p := &ClientPin{}
	if err := unix.SchedGetaffinity(0, &p.was); err != nil {
		return nil, fmt.Errorf("reading the client's CPU affinity: %w", err)
	}
	var rest []int
	var set unix.CPUSet
	for _, c := range online {
		if !slices.Contains(server, c) && p.was.IsSet(c) {
			rest = append(rest, c)
			set.Set(c)
		}
	}
	if len(rest) == 0 {
		p.Note = fmt.Sprintf("The server has CPUs %s, which leaves the client no CPU of its own: it shares them.", serverCPUs)
		return p, nil
	}
	if err := setThreads(&set); err != nil {
		_ = setThreads(&p.was)
		return nil, err
	}
	p.CPUs = FormatCPUs(rest)
	return p, nil
}

// Undo gives every thread back the affinity the process had.
func (p *ClientPin) Undo() error {
	if p.CPUs == "" {
		return nil
	}
	return setThreads(&p.was)
}

// setThreads sets the affinity of every thread: the kernel sets one
// thread's at a time, and a Go program has many, which the runtime
// starts from whichever thread it is on. A thread started during a pass
// may have copied an old mask, so passes repeat until one finds no new
// thread.
func setThreads(set *unix.CPUSet) error {
	done := map[int]bool{}
	for {
		threads, err := procfs.AllThreads(os.Getpid())
		if err != nil {
			return err
		}
		fresh := false
		for _, th := range threads {
			tid := th.PID
			if done[tid] {
				continue
			}
			fresh = true
			done[tid] = true
			// A thread that exited since the listing is no concern.
			if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("setting the CPU affinity of thread %d: %w", tid, err)
			}
		}
		if !fresh {
			return nil
		}
	}
}
