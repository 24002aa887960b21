package server

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// allowed reads every thread's Cpus_allowed_list, by thread.
func allowed(t *testing.T) map[string]string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread exited
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				out[filepath.Base(filepath.Dir(path))] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// busyThreads makes the runtime start more threads, from pinned ones.
func busyThreads(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for i := 0; i < 1e6; i++ {
				_ = i * i
			}
		})
	}
	wg.Wait()
}

func TestPinClient(t *testing.T) {
	online, err := OnlineCPUs()
	if err != nil {
		t.Skip(err)
	}
	if len(online) < 2 {
		t.Skipf("one CPU online (%v): no CPU is left for the client", online)
	}
	busyThreads(4)
	before := allowed(t)
	server := FormatCPUs(online[:1])
	pin, err := PinClient(server)
	if err != nil {
		t.Fatal(err)
	}
	if pin.CPUs != FormatCPUs(online[1:]) || pin.Note != "" {
		t.Errorf("pinned to %q (note %q), want %s", pin.CPUs, pin.Note, FormatCPUs(online[1:]))
	}
	busyThreads(8)
	for tid, cpus := range allowed(t) {
		if cpus != pin.CPUs {
			t.Errorf("thread %s may run on %s while pinned to %s", tid, cpus, pin.CPUs)
		}
	}
	if err := pin.Undo(); err != nil {
		t.Fatal(err)
	}
	want := before[strconv.Itoa(os.Getpid())]
	for tid, cpus := range allowed(t) {
		if cpus != want {
			t.Errorf("thread %s may run on %s after the pin was undone, want %s", tid, cpus, want)
		}
	}

	all, err := PinClient(FormatCPUs(online))
	if err != nil {
		t.Fatal(err)
	}
	if all.CPUs != "" || !strings.Contains(all.Note, "leaves the client no CPU of its own") {
		t.Errorf("a server on every CPU: client pinned to %q, note %q", all.CPUs, all.Note)
	}
}
