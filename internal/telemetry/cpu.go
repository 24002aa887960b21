package telemetry

import (
	"errors"

	"github.com/prometheus/procfs"
)

// cpuSeconds is all the time a CPU line counts. Guest time is left out:
// the kernel already counts it in user (and guest_nice in nice).
func cpuSeconds(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
}

// busySeconds is the time a CPU ran something, as CPUTimes.Busy counts it.
func busySeconds(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
}

// cpuShare splits the time between two readings of a CPU line, in percent
// of all the time the line counted (as mpstat does, so that the shares sum
// to 100 whatever the sampling jitter).
func cpuShare(prev, cur procfs.CPUStat) CPUTimes {
	// The kernel's iowait and idle can step back a little between
	// readings (iowait is estimated per CPU); a negative share means 0.
	d := func(a, b float64) float64 { return max(b-a, 0) }
	t := CPUTimes{
		User:   d(prev.User+prev.Nice, cur.User+cur.Nice),
		System: d(prev.System, cur.System),
		IOWait: d(prev.Iowait, cur.Iowait),
		IRQ:    d(prev.IRQ+prev.SoftIRQ, cur.IRQ+cur.SoftIRQ),
		Steal:  d(prev.Steal, cur.Steal),
		Idle:   d(prev.Idle, cur.Idle),
	}
	total := t.User + t.System + t.IOWait + t.IRQ + t.Steal + t.Idle
	if total == 0 {
		return CPUTimes{}
	}
	k := 100 / total
	return CPUTimes{User: t.User * k, System: t.System * k, IOWait: t.IOWait * k,
		IRQ: t.IRQ * k, Steal: t.Steal * k, Idle: t.Idle * k}
}

// processTree reads the CPU time of processes, keeping its maps between
// samples so that a scan of /proc allocates little.
type processTree struct {
	parent map[int]int
	own    map[int]float64 // seconds, with the children it reaped
	inTree map[int]bool
	// outside are the processes the last scan found outside the tree. A
	// process never moves into a tree (an orphan moves to init or a
	// subreaper), so their stat need not be read again: most of a host's
	// processes cost one directory entry a scan. A pid reused within one
	// interval would escape notice, which needs the pid space to wrap in a
	// second.
	outside, wasOutside map[int]bool
}

// clientSeconds is the CPU time the client process has used.
func (t *processTree) clientSeconds(fs procfs.FS, pid int) (float64, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, err
	}
	s, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return float64(s.UTime+s.STime) / clockTicks, nil
}

// errGone is a server whose root process no longer exists.
var errGone = errors.New("gone")

// serverSeconds is the CPU time of the tree rooted at pid: every live
// member's own time plus the time of the children it reaped. A member that
// exits moves its whole time into its parent's reaped time, which the sum
// already holds, so the sum only grows as the tree works, whoever exits.
func (t *processTree) serverSeconds(fs procfs.FS, root int) (float64, error) {
	procs, err := fs.AllProcs()
	if err != nil {
		return 0, err
	}
	if t.parent == nil {
		t.parent, t.own, t.inTree = map[int]int{}, map[int]float64{}, map[int]bool{}
		t.outside, t.wasOutside = map[int]bool{}, map[int]bool{}
	}
	clear(t.parent)
	clear(t.own)
	clear(t.inTree)
	t.outside, t.wasOutside = t.wasOutside, t.outside
	clear(t.outside)
	for _, p := range procs {
		if t.wasOutside[p.PID] && p.PID != root {
			t.inTree[p.PID] = false
			continue
		}
		s, err := p.Stat()
		if err != nil {
			continue // exited since the listing
		}
		t.parent[p.PID] = s.PPID
		t.own[p.PID] = float64(int(s.UTime+s.STime)+s.CUTime+s.CSTime) / clockTicks
	}
	if _, ok := t.own[root]; !ok {
		return 0, errGone
	}
	t.inTree[root] = true
	var sum float64
	for pid, own := range t.own {
		if t.member(pid, root) {
			sum += own
		}
	}
	for pid, in := range t.inTree {
		if !in {
			t.outside[pid] = true
		}
	}
	return sum, nil
}

// member says whether pid descends from root, remembering the answer for
// every process on the way up.
func (t *processTree) member(pid, root int) bool {
	in, known := t.inTree[pid]
	if known {
		return in
	}
	// pid 0 is the kernel, parent of init and kthreadd: the top.
	if pid == 0 {
		return false
	}
	t.inTree[pid] = false // a cycle (a reused pid) ends here
	in = t.member(t.parent[pid], root)
	t.inTree[pid] = in
	return in
}
