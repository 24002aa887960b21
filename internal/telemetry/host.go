package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// architecture Linux runs on, whatever the kernel's own HZ (procfs assumes
// it too).
const clockTicks = 100

// HostConfig says where to read and what to watch.
type HostConfig struct {
	// ProcRoot and SysRoot are "/proc" and "/sys" when empty; tests point
	// them at fixture trees.
	ProcRoot, SysRoot string
	// ClientPID is this process when 0.
	ClientPID int
	// ServerPID is the root of the server's process tree on this host;
	// 0 when it is unknown or elsewhere.
	ServerPID int
	// Nodes are the nodes of the server the run is on (NodeSource), whose
	// process trees on this host are read each sample too.
	Nodes []Node
	// DataPath is a file or directory of the database; "" when unknown.
	DataPath string
	// ServerCgroup is the directory of a confined server's memory cgroup
	// (v1 memory.usage_in_bytes or v2 memory.current); "" when none.
	ServerCgroup string
	// Perf tries perf_event_open cycle counters for the frequency.
	Perf bool
}

// Host samples the host's side of a run: it keeps the previous reading of
// every cumulative counter, so that each Sample is the interval since the
// last. It is not safe for concurrent use.
type Host struct {
	cfg   HostConfig
	proc  procfs.FS
	block blockdevice.FS
	facts HostFacts
	// cpus are the CPU numbers /proc/stat listed at the start; per-CPU
	// figures are indexed by CPU number, up to the largest.
	cpus        []int
	freq        frequency
	idle        *cpuidle
	tree        processTree
	wholeDisks  map[string]bool
	unavailable map[string]string
	cgroupBuf   []byte
	// files stay open between samples (see keptFiles).
	files     keptFiles
	prev, cur snapshot
	primed    bool
	// broken says why this host cannot be sampled at all.
	broken string
	// serverGone says the last reading found no server process where
	// there was one: it was killed, or restarted as another.
	serverGone bool
	// nodes are the nodes whose trees are read: those on this host, until
	// a reading finds one gone. roots are the trees' roots, the server's
	// and the nodes', sorted.
	nodes []Node
	roots []int
}

// snapshot is one reading of every cumulative counter.
type snapshot struct {
	at     time.Time
	stat   procfs.Stat
	client float64 // seconds of CPU
	server float64
	// clientWait is the seconds the client's threads waited for a CPU;
	// clientWaitOK says it was read.
	clientWait   float64
	clientWaitOK bool
	// serverOK says the server's tree was read.
	serverOK bool
	// waits are the run-queue waits of the server's and the nodes'
	// processes (treeWaits), by pid; waitsOK says they were read.
	waits   map[int]float64
	waitsOK bool
	// nodes are the seconds of CPU of each node's tree, by name, read
	// from the root process named.
	nodes  map[string]nodeReading
	cycles []perfCount
	idle   [][]uint64 // µs, by CPU number then state
	disks  []blockdevice.Diskstats
}

// nodeReading is a node's tree's CPU time, read from its root pid.
type nodeReading struct {
	pid     int
	seconds float64
}

// NewHost prepares to sample the host. It never fails: what it cannot read
// is named in Unavailable, with the reason, and left out of the samples.
func NewHost(cfg HostConfig) *Host {
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.SysRoot == "" {
		cfg.SysRoot = "/sys"
	}
	if cfg.ClientPID == 0 {
		cfg.ClientPID = os.Getpid()
	}
	h := &Host{cfg: cfg, unavailable: map[string]string{}, files: keptFiles{}}
	h.tree.files = h.files
	h.facts.Nodes = cfg.Nodes
	h.SetNodes(cfg.Nodes)
	if runtime.GOOS != "linux" {
		h.broken = "host telemetry reads Linux's /proc and /sys; this is " + runtime.GOOS
		h.unavailable["host"] = h.broken
		return h
	}
	var err error
	if h.proc, err = procfs.NewFS(cfg.ProcRoot); err == nil {
		h.block, err = blockdevice.NewFS(cfg.ProcRoot, cfg.SysRoot)
	}
	if err != nil {
		h.broken = err.Error()
		h.unavailable["host"] = h.broken
		return h
	}
	stat, err := h.proc.Stat()
	if err != nil {
		h.broken = err.Error()
		h.unavailable["host"] = h.broken
		return h
	}
	for cpu := range stat.CPU {
		h.cpus = append(h.cpus, int(cpu))
	}
	sort.Ints(h.cpus)
	h.readFacts()
	if cfg.ServerPID > 0 {
		dir, limit, cpus := serverCgroup(cfg.ProcRoot, cfg.SysRoot, cfg.ServerPID)
		// A cgroup the client shares (a container's) limits the server,
		// but its use is not the server's alone.
		if mine, _, _ := serverCgroup(cfg.ProcRoot, cfg.SysRoot, cfg.ClientPID); h.cfg.ServerCgroup == "" && dir != mine {
			h.cfg.ServerCgroup = dir
		}
		h.facts.ServerMemoryLimit, h.facts.ServerCPUs = limit, cpus
	}
	h.idle = h.openCpuidle()
	h.freq = h.openFrequency()
	h.facts.FrequencySource = h.freq.source()
	h.readDisks()
	if cfg.ServerPID == 0 {
		h.unavailable["server_cpu"] = "the server's process is not known on this host"
	}
	return h
}

// Facts are the host's settings, as far as they could be read.
func (h *Host) Facts() HostFacts { return h.facts }

// CStates names the idle states, in the order of HostSample.CStates.
func (h *Host) CStates() []string {
	if h.idle == nil {
		return nil
	}
	return h.idle.names
}

// Unavailable says, per thing that could not be read, why.
func (h *Host) Unavailable() map[string]string { return h.unavailable }

// Sample reads the host and returns the interval since the previous call
// (DT set, T left for the caller). The first call only primes the counters
// and returns false, as does every call on a host that cannot be read.
func (h *Host) Sample(now time.Time) (HostSample, bool) {
	if h.broken != "" || !h.read(now) {
		return HostSample{}, false
	}
	if !h.primed {
		h.primed = true
		h.prev, h.cur = h.cur, h.prev
		return HostSample{}, false
	}
	dt := h.cur.at.Sub(h.prev.at).Seconds()
	if dt <= 0 {
		return HostSample{}, false
	}
	s := HostSample{
		DT:              dt,
		CPU:             cpuShare(h.prev.stat.CPUTotal, h.cur.stat.CPUTotal),
		PerCPU:          h.perCPU(),
		ContextSwitches: float64(h.cur.stat.ContextSwitches-h.prev.stat.ContextSwitches) / dt,
		Running:         int64(h.cur.stat.ProcessesRunning),
		Blocked:         int64(h.cur.stat.ProcessesBlocked),
		Disks:           h.diskRates(dt),
		Memory:          h.memory(),
	}
	all := h.capacity(dt)
	if all > 0 {
		s.Client = 100 * max(h.cur.client-h.prev.client, 0) / all
		if h.cur.clientWaitOK && h.prev.clientWaitOK {
			wait := 100 * max(h.cur.clientWait-h.prev.clientWait, 0) / all
			s.ClientWait = &wait
		}
		if h.cur.serverOK && h.prev.serverOK {
			server := 100 * max(h.cur.server-h.prev.server, 0) / all
			s.Server = &server
		}
		if h.cur.waitsOK && h.prev.waitsOK {
			wait := 100 * waitGrowth(h.prev.waits, h.cur.waits) / all
			s.ServerWait = &wait
		}
		s.Nodes = h.nodeShares(all)
	}
	s.AvgMHz, s.BusyMHz = h.freq.mhz(h, dt)
	if h.idle != nil {
		s.CStates = h.idle.residency(h.prev.idle, h.cur.idle, dt)
	}
	h.prev, h.cur = h.cur, h.prev
	return s, true
}

// capacity is the CPU time all CPUs had over an interval of dt seconds,
// which the client's and the server's shares divide, as pidstat and top
// divide a process's time by the elapsed time. A process's time is the
// scheduler's exact runtime, while /proc/stat's busy time is counted in
// ticks, and a tickless kernel loses part of the tick in which a CPU goes
// idle: under a load that sleeps and wakes often, /proc/stat's total fell
// 3.6% short of the elapsed time (TPROC-C, 4 VUs, 2 CPUs), and the
// server's share read that much above pidstat's. The host's own split
// stays /proc/stat's, as mpstat shows it, adding up to 100.
func (h *Host) capacity(dt float64) float64 {
	if len(h.cpus) == 0 {
		return cpuSeconds(h.cur.stat.CPUTotal) - cpuSeconds(h.prev.stat.CPUTotal)
	}
	return dt * float64(len(h.cpus))
}

// read takes the current snapshot into h.cur, reusing its buffers.
func (h *Host) read(now time.Time) bool {
	stat, err := h.proc.Stat()
	if err != nil {
		h.unavailable["host"] = err.Error()
		return false
	}
	c := &h.cur
	c.at, c.stat = now, stat
	if c.client, err = h.tree.clientSeconds(h.cfg.ProcRoot, h.cfg.ClientPID); err != nil {
		h.unavailable["client_cpu"] = err.Error()
	}
	c.clientWait, err = h.tree.runWaitSeconds(h.cfg.ProcRoot, h.cfg.ClientPID)
	if c.clientWaitOK = err == nil; err != nil {
		h.unavailable["client_run_wait"] = err.Error()
	}
	h.readTrees()
	c.cycles = h.freq.read(c.cycles)
	if h.idle != nil {
		c.idle = h.idle.read(c.idle)
	}
	if c.disks, err = h.block.ProcDiskstats(); err != nil {
		h.unavailable["disks"] = err.Error()
	}
	return true
}

// readTrees reads the server's and the nodes' process trees into h.cur,
// in one scan. A node whose root is gone is watched no more: a node lost
// (a failover's) is absent from then on, unless SetNodes names it again.
func (h *Host) readTrees() {
	c := &h.cur
	c.serverOK, c.waitsOK = false, false
	clear(c.nodes)
	if len(h.roots) == 0 {
		return
	}
	sums, err := h.tree.treeSeconds(h.cfg.ProcRoot, h.roots)
	if err != nil {
		h.unavailable["server_cpu"] = err.Error()
		h.serverGone = false
		return
	}
	if c.waits == nil {
		c.waits = map[int]float64{}
	}
	h.tree.treeWaits(h.cfg.ProcRoot, c.waits)
	c.waitsOK = len(c.waits) > 0
	if pid := h.cfg.ServerPID; pid != 0 {
		c.server, c.serverOK = sums[pid]
		h.serverGone = !c.serverOK
		if h.serverGone {
			h.unavailable["server_cpu"] = fmt.Sprintf("server process %d: %v", pid, errGone)
		}
	}
	live := h.nodes[:0]
	for _, n := range h.nodes {
		if secs, ok := sums[n.PID]; ok {
			if c.nodes == nil {
				c.nodes = map[string]nodeReading{}
			}
			c.nodes[n.Name] = nodeReading{pid: n.PID, seconds: secs}
			live = append(live, n)
		}
	}
	if len(live) < len(h.nodes) {
		h.nodes = live
		h.setRoots()
	}
}

// nodeShares are each node's share of all CPUs over the interval, in the
// capacity all: a node read at both ends from the same root process.
func (h *Host) nodeShares(all float64) map[string]float64 {
	var out map[string]float64
	for name, cur := range h.cur.nodes {
		prev, ok := h.prev.nodes[name]
		if !ok || prev.pid != cur.pid {
			continue
		}
		if out == nil {
			out = make(map[string]float64, len(h.cur.nodes))
		}
		out[name] = 100 * max(cur.seconds-prev.seconds, 0) / all
	}
	return out
}

// ServerGone says the last sample found the server's process gone.
func (h *Host) ServerGone() bool { return h.serverGone }

// Follow watches the server's new process, once it has restarted. The
// first sample after counts no server CPU: the new process's counters do
// not continue the old one's.
func (h *Host) Follow(pid int) {
	h.cfg.ServerPID, h.serverGone = pid, false
	h.prev.serverOK, h.prev.waitsOK = false, false
	h.setRoots()
}

// SetNodes watches the trees of nodes, those on this host, from the next
// sample on: a node's CPU counts once it has been read twice from the
// same root process, and the server's run-queue wait from the sample
// after the next.
func (h *Host) SetNodes(nodes []Node) {
	// Processes of a node found again were not read before: their whole
	// run-queue wait would count as the next interval's.
	h.prev.waitsOK = false
	h.nodes = h.nodes[:0]
	for _, n := range nodes {
		if n.PID > 0 {
			h.nodes = append(h.nodes, n)
		}
	}
	h.setRoots()
}

// setRoots are the roots of the trees a sample reads: the server's and
// the nodes', each once.
func (h *Host) setRoots() {
	h.roots = h.roots[:0]
	if h.cfg.ServerPID > 0 {
		h.roots = append(h.roots, h.cfg.ServerPID)
	}
	for _, n := range h.nodes {
		h.roots = append(h.roots, n.PID)
	}
	slices.Sort(h.roots)
	h.roots = slices.Compact(h.roots)
}

// Close releases the perf counters.
func (h *Host) Close() error {
	h.files.closeAll()
	if h.freq == nil {
		return nil
	}
	return h.freq.close()
}

// perCPU splits each CPU's time over the interval, by CPU number.
func (h *Host) perCPU() []CPUTimes {
	if len(h.cpus) == 0 {
		return nil
	}
	out := make([]CPUTimes, h.cpus[len(h.cpus)-1]+1)
	for _, cpu := range h.cpus {
		prev, ok1 := h.prev.stat.CPU[int64(cpu)]
		cur, ok2 := h.cur.stat.CPU[int64(cpu)]
		if ok1 && ok2 {
			out[cpu] = cpuShare(prev, cur)
		}
	}
	return out
}

// cpuPath is a file under a CPU's directory in sysfs.
func (h *Host) cpuPath(cpu int, elem ...string) string {
	return filepath.Join(append([]string{h.cfg.SysRoot, "devices/system/cpu", fmt.Sprintf("cpu%d", cpu)}, elem...)...)
}
