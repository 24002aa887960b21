package telemetry

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"

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
	buf                 []byte
	pids                []int
	files               keptFiles
	client              int // whose file stays open, outside the tree
}

func statPath(proc string, pid int) string { return filepath.Join(proc, strconv.Itoa(pid), "stat") }

// procStat reads a process's parent and its CPU ticks (its own, and,
// with reaped, its reaped children's) from /proc/PID/stat, into t's
// buffer: procfs's parser scans every field with fmt, which at a sample a
// second over a server's processes cost more than the rest of a sample.
func (t *processTree) procStat(proc string, pid int, reaped bool) (ppid int, ticks int64, err error) {
	if cap(t.buf) < 1024 {
		t.buf = make([]byte, 1024)
	}
	n, err := t.files.read(statPath(proc, pid), t.buf[:cap(t.buf)])
	if err != nil {
		return 0, 0, err
	}
	b := t.buf[:n]
	// The command is in parentheses and may hold anything; the fields
	// after it are the state, ppid, ... utime (12th), stime, cutime, cstime.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errBadStat
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 15 {
		return 0, 0, errBadStat
	}
	last := 12
	if reaped {
		last = 14
	}
	for k := 11; k <= last; k++ {
		v, err := strconv.ParseInt(string(fields[k]), 10, 64)
		if err != nil {
			return 0, 0, errBadStat
		}
		ticks += v
	}
	ppid, err = strconv.Atoi(string(fields[1]))
	return ppid, ticks, err
}

var errBadStat = errors.New("unreadable /proc/PID/stat")

// list is the PIDs of every process, in t's slice.
func (t *processTree) list(proc string) ([]int, error) {
	d, err := os.Open(proc)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	t.pids = t.pids[:0]
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			t.pids = append(t.pids, pid)
		}
	}
	return t.pids, nil
}

// clientSeconds is the CPU time the client process has used.
func (t *processTree) clientSeconds(proc string, pid int) (float64, error) {
	t.client = pid
	_, ticks, err := t.procStat(proc, pid, false)
	return float64(ticks) / clockTicks, err
}

// errGone is a server whose root process no longer exists.
var errGone = errors.New("gone")

// serverSeconds is the CPU time of the tree rooted at pid: every live
// member's own time plus the time of the children it reaped. A member that
// exits moves its whole time into its parent's reaped time, which the sum
// already holds, so the sum only grows as the tree works, whoever exits.
func (t *processTree) serverSeconds(proc string, root int) (float64, error) {
	pids, err := t.list(proc)
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
	for _, pid := range pids {
		if t.wasOutside[pid] && pid != root {
			t.inTree[pid] = false
			continue
		}
		ppid, ticks, err := t.procStat(proc, pid, true)
		if err != nil {
			continue // exited since the listing
		}
		t.parent[pid] = ppid
		t.own[pid] = float64(ticks) / clockTicks
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
			if pid != t.client {
				// Only the tree's files are worth keeping open.
				t.files.close(statPath(proc, pid))
			}
		}
	}
	// Nor those of processes that have gone since, unread.
	for path := range t.files {
		dir := filepath.Dir(path)
		if pid, err := strconv.Atoi(filepath.Base(dir)); err == nil && filepath.Dir(dir) == filepath.Clean(proc) {
			if _, live := t.own[pid]; !live && pid != t.client {
				t.files.close(path)
			}
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

// runWaitSeconds is the time the threads of pid have spent runnable and
// waiting for a CPU: the second field of each thread's schedstat, the
// kernel's run-queue wait. Beside the CPU the process used, it is the CPU
// it wanted and did not get: a process held to its CPUs, or sharing them,
// waits, where one with CPU to spare does not. A thread that exits takes
// its wait with it, so the sum can step back a little.
func (t *processTree) runWaitSeconds(proc string, pid int) (float64, error) {
	dir := filepath.Join(proc, strconv.Itoa(pid), "task")
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	tasks, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, err
	}
	if cap(t.buf) < 1024 {
		t.buf = make([]byte, 1024)
	}
	var ns int64
	read := 0
	for _, task := range tasks {
		n, err := t.files.read(filepath.Join(dir, task, "schedstat"), t.buf[:cap(t.buf)])
		if err != nil {
			continue // a thread gone since the listing
		}
		fields := bytes.Fields(t.buf[:n])
		if len(fields) < 2 {
			return 0, errBadSchedstat
		}
		v, err := strconv.ParseInt(string(fields[1]), 10, 64)
		if err != nil {
			return 0, errBadSchedstat
		}
		ns += v
		read++
	}
	if read == 0 {
		return 0, errBadSchedstat
	}
	return float64(ns) / 1e9, nil
}

var errBadSchedstat = errors.New("no readable /proc/PID/task/*/schedstat")
