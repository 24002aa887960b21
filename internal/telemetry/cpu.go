package telemetry

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	// rootOf is the root whose tree each process of the scan is in, 0
	// for none.
	rootOf map[int]int
	// roots are the last scan's roots, sorted; sums their trees' times.
	roots []int
	sums  map[int]float64
	// outside are the processes the last scan found outside every tree. A
	// process never moves into a tree (an orphan moves to init or a
	// subreaper), so their stat need not be read again while the roots
	// stay the same: most of a host's processes cost one directory entry
	// a scan. A pid reused within one interval would escape notice, which
	// needs the pid space to wrap in a second.
	outside, wasOutside map[int]bool
	buf                 []byte
	pids                []int
	files               keptFiles
	client              int // whose file stays open, outside the trees
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

// treeSeconds is the CPU time of the trees rooted at roots (sorted, no
// root twice), read in one scan of /proc, by root; a root that no longer
// exists is absent. A tree's time is every live member's own time plus
// the time of the children it reaped. A member that exits moves its whole
// time into its parent's reaped time, which the sum already holds, so the
// sum only grows as the tree works, whoever exits. A process is in the
// tree of the nearest root above it. The map is the tree's, until the
// next call.
func (t *processTree) treeSeconds(proc string, roots []int) (map[int]float64, error) {
	pids, err := t.list(proc)
	if err != nil {
		return nil, err
	}
	if t.parent == nil {
		t.parent, t.own, t.rootOf, t.sums = map[int]int{}, map[int]float64{}, map[int]int{}, map[int]float64{}
		t.outside, t.wasOutside = map[int]bool{}, map[int]bool{}
	}
	clear(t.parent)
	clear(t.own)
	clear(t.rootOf)
	clear(t.sums)
	t.outside, t.wasOutside = t.wasOutside, t.outside
	clear(t.outside)
	// A new root may be the top of processes the last scan found outside
	// (a server restarted as another process, a node found again).
	if !slices.Equal(roots, t.roots) {
		clear(t.wasOutside)
		t.roots = append(t.roots[:0], roots...)
	}
	isRoot := func(pid int) bool { _, found := slices.BinarySearch(roots, pid); return found }
	for _, pid := range pids {
		if t.wasOutside[pid] && !isRoot(pid) {
			t.rootOf[pid] = 0
			continue
		}
		ppid, ticks, err := t.procStat(proc, pid, true)
		if err != nil {
			continue // exited since the listing
		}
		t.parent[pid] = ppid
		t.own[pid] = float64(ticks) / clockTicks
	}
	for _, root := range roots {
		if _, ok := t.own[root]; ok {
			t.rootOf[root] = root
			t.sums[root] = 0
		}
	}
	for pid, own := range t.own {
		if root := t.member(pid); root != 0 {
			t.sums[root] += own
		}
	}
	for pid, root := range t.rootOf {
		if root == 0 {
			t.outside[pid] = true
			if pid != t.client {
				// Only the trees' files are worth keeping open.
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
	return t.sums, nil
}

// member is the root whose tree pid is in, 0 for none, remembering the
// answer for every process on the way up.
func (t *processTree) member(pid int) int {
	root, known := t.rootOf[pid]
	if known {
		return root
	}
	// pid 0 is the kernel, parent of init and kthreadd: the top.
	if pid == 0 {
		return 0
	}
	t.rootOf[pid] = 0 // a cycle (a reused pid) ends here
	root = t.member(t.parent[pid])
	t.rootOf[pid] = root
	return root
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

// treeWaits reads the run-queue wait (runWaitSeconds) of every member of
// the last scan's trees into waits, by pid: the CPU the trees' processes
// wanted and did not get. A member gone since the scan is left out.
func (t *processTree) treeWaits(proc string, waits map[int]float64) {
	clear(waits)
	for pid, root := range t.rootOf {
		if root == 0 {
			continue
		}
		if w, err := t.runWaitSeconds(proc, pid); err == nil {
			waits[pid] = w
		}
	}
}

// waitGrowth is how much the members' waits grew from prev to cur, in
// seconds: a member read both times by what it added, one born between
// by all of its wait. A member that exited takes the wait it added since
// prev with it, so the growth may fall short by that much; it never
// steps back, as a sum over the members would where one exits.
func waitGrowth(prev, cur map[int]float64) float64 {
	var sum float64
	for pid, w := range cur {
		sum += max(w-prev[pid], 0)
	}
	return sum
}
