package telemetry

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fixture builds a /proc and /sys at the first snapshot in a temporary
// directory: testdata/host/t0/proc and the given sys tree. It returns the
// root, which advance moves to the second snapshot.
func fixture(t *testing.T, sys string) string {
	t.Helper()
	root := t.TempDir()
	copyTree(t, "testdata/host/t0/proc", filepath.Join(root, "proc"))
	copyTree(t, sys, filepath.Join(root, "sys"))
	return root
}

// advance moves a fixture one second on: the counters that changed, and
// process 202 (a grandchild of the server) has exited, its time now in its
// parent's reaped time.
func advance(t *testing.T, root string, withSys bool) {
	t.Helper()
	copyTree(t, "testdata/host/t1/proc", filepath.Join(root, "proc"))
	if withSys {
		copyTree(t, "testdata/host/t1/sys", filepath.Join(root, "sys"))
	}
	if err := os.RemoveAll(filepath.Join(root, "proc", "202")); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies src over dst, keeping symbolic links as links.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// near compares figures computed in floating point.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func nearAll(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

func nearCPU(a, b CPUTimes) bool {
	return nearAll([]float64{a.User, a.System, a.IOWait, a.IRQ, a.Steal, a.Idle},
		[]float64{b.User, b.System, b.IOWait, b.IRQ, b.Steal, b.Idle})
}

// TestHostFixture reads a host with every source but perf, over one second
// between two snapshots whose differences were chosen by hand.
func TestHostFixture(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the host is read the Linux way")
	}
	root := fixture(t, "testdata/host/t0/sys")
	h := NewHost(HostConfig{ProcRoot: filepath.Join(root, "proc"), SysRoot: filepath.Join(root, "sys"),
		ClientPID: 100, ServerPID: 200})
	defer h.Close()
	t0 := time.Unix(1_000_000, 0)
	if _, ok := h.Sample(t0); ok {
		t.Fatal("the first sample only primes, yet it returned one")
	}
	advance(t, root, true)
	s, ok := h.Sample(t0.Add(time.Second))
	if !ok {
		t.Fatalf("no sample; unavailable: %v", h.Unavailable())
	}

	wantFacts := HostFacts{TransparentHuge: "always", NrHugepages: 16,
		CpufreqDriver: "acpi-cpufreq", CpufreqGovernor: "performance",
		CpuidleDriver: "intel_idle", CpuidleGovernor: "menu", FrequencySource: "cpuinfo_avg_freq",
		ServerPID: 200, OnlineCPUs: 2}
	if got := h.Facts(); !reflect.DeepEqual(got, wantFacts) {
		t.Errorf("facts:\n got %+v\nwant %+v", got, wantFacts)
	}
	if got := h.CStates(); !reflect.DeepEqual(got, []string{"POLL", "C1", "C6"}) {
		t.Errorf("cstates %v", got)
	}
	// Perf was not asked for; cpufreq stood in, so frequency is no gap.
	if _, ok := h.Unavailable()["frequency"]; ok {
		t.Errorf("unavailable: %v", h.Unavailable())
	}

	server := -1.0 // none
	if s.Server != nil {
		server = *s.Server
	}
	checks := []struct {
		name      string
		got, want any
		ok        bool
	}{
		// 200 ticks over both CPUs: user 70+10 (nice in, guest not twice),
		// irq 3 (hard and soft).
		{"cpu", s.CPU, CPUTimes{User: 40, System: 7.5, IOWait: 5, IRQ: 1.5, Steal: 1, Idle: 45},
			nearCPU(s.CPU, CPUTimes{User: 40, System: 7.5, IOWait: 5, IRQ: 1.5, Steal: 1, Idle: 45})},
		{"cpu0", s.PerCPU[0], CPUTimes{User: 70, System: 10, IOWait: 5, IRQ: 3, Steal: 2, Idle: 10},
			len(s.PerCPU) == 2 && nearCPU(s.PerCPU[0], CPUTimes{User: 70, System: 10, IOWait: 5, IRQ: 3, Steal: 2, Idle: 10})},
		{"cpu1", s.PerCPU[1], CPUTimes{User: 10, System: 5, IOWait: 5, Idle: 80},
			len(s.PerCPU) == 2 && nearCPU(s.PerCPU[1], CPUTimes{User: 10, System: 5, IOWait: 5, Idle: 80})},
		// 50 ticks of 200.
		{"client", s.Client, 25.0, near(s.Client, 25)},
		// Its two threads waited 0.15 s and 0.1 s for a CPU: 0.25 of 2.
		{"client wait", s.ClientWait, 12.5, s.ClientWait != nil && near(*s.ClientWait, 12.5)},
		// The tree grew from 1420 to 1458 ticks: 202 exited into 201's
		// reaped time, 203 was born, 300 is no member.
		{"server", server, 19.0, near(server, 19)},
		// 200 waited 0.1 s more, 201's two threads 0.05 s each, 203 was
		// born and waited 0.2 s, 202's exit takes nothing off, and 300 is
		// no member: 0.4 s of 2.
		{"server wait", s.ServerWait, 20.0, s.ServerWait != nil && near(*s.ServerWait, 20)},
		{"avg MHz", s.AvgMHz, []float64{2500, 3100}, nearAll(s.AvgMHz, []float64{2500, 3100})},
		{"busy MHz", s.BusyMHz, []float64(nil), s.BusyMHz == nil},
		{"cstates cpu0", s.CStates[0], []float64{0.1, 20, 60}, nearAll(s.CStates[0], []float64{0.1, 20, 60})},
		{"cstates cpu1", s.CStates[1], []float64{0, 50, 30}, nearAll(s.CStates[1], []float64{0, 50, 30})},
		// sdb and loop0 never did IO, vda1 is vda's partition.
		{"disks", s.Disks, []DiskRates{{Device: "vda", ReadIOPS: 100, WriteIOPS: 400, ReadMBps: 10.48576,
			WriteMBps: 4.096, ReadAwaitMs: 0.5, WriteAwaitMs: 2, UtilPct: 25}},
			len(s.Disks) == 1 && s.Disks[0].Device == "vda" && nearAll(
				[]float64{s.Disks[0].ReadIOPS, s.Disks[0].WriteIOPS, s.Disks[0].ReadMBps, s.Disks[0].WriteMBps,
					s.Disks[0].ReadAwaitMs, s.Disks[0].WriteAwaitMs, s.Disks[0].UtilPct},
				[]float64{100, 400, 10.48576, 4.096, 0.5, 2, 25})},
		{"memory", s.Memory, Memory{Free: 7_900_000 << 10, Available: 12_000_000 << 10, Cached: 3_000_000 << 10,
			Dirty: 5000 << 10, Writeback: 200 << 10, SwapUsed: 500_000 << 10, HugeTotal: 16, HugeFree: 10, HugeReserved: 4},
			s.Memory == Memory{Free: 7_900_000 << 10, Available: 12_000_000 << 10, Cached: 3_000_000 << 10,
				Dirty: 5000 << 10, Writeback: 200 << 10, SwapUsed: 500_000 << 10, HugeTotal: 16, HugeFree: 10, HugeReserved: 4}},
		{"ctxt", s.ContextSwitches, 2000.0, near(s.ContextSwitches, 2000)},
		{"procs", [2]int64{s.Running, s.Blocked}, [2]int64{5, 2}, s.Running == 5 && s.Blocked == 2},
		{"dt", s.DT, 1.0, s.DT == 1 && s.T == 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestHostBare reads a host whose /sys has no cpuidle states and no
// cpufreq, and whose server is gone: the gaps are named, nothing fails.
func TestHostBare(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the host is read the Linux way")
	}
	root := fixture(t, "testdata/bare/sys")
	h := NewHost(HostConfig{ProcRoot: filepath.Join(root, "proc"), SysRoot: filepath.Join(root, "sys"),
		ClientPID: 100, ServerPID: 4242, Perf: false})
	defer h.Close()
	t0 := time.Unix(1_000_000, 0)
	h.Sample(t0)
	advance(t, root, false)
	s, ok := h.Sample(t0.Add(time.Second))
	if !ok {
		t.Fatalf("no sample; unavailable: %v", h.Unavailable())
	}
	if s.AvgMHz != nil || s.BusyMHz != nil || s.CStates != nil || s.Server != nil || h.CStates() != nil {
		t.Errorf("figures from nowhere: %+v", s)
	}
	if !near(s.Client, 25) {
		t.Errorf("client %v, want 25", s.Client)
	}
	un := h.Unavailable()
	for key, want := range map[string]string{
		"frequency":   "perf counters not asked for, no cpufreq in /sys",
		"cstates":     `cpuidle driver: "none"`,
		"server_cpu":  "server process 4242: gone",
		"data_device": "not known",
	} {
		if !strings.Contains(un[key], want) {
			t.Errorf("unavailable[%q] = %q, want it to say %q", key, un[key], want)
		}
	}
	if f := h.Facts(); f.TransparentHuge != "madvise" || f.CpuidleDriver != "none" || f.FrequencySource != "" {
		t.Errorf("facts %+v", f)
	}
}

// TestDiskOf follows device numbers to the whole disk: a partition to its
// parent, an overlay to its upper directory's disk, and a tmpfs to no disk.
func TestDiskOf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the host is read the Linux way")
	}
	root := fixture(t, "testdata/host/t0/sys")
	// The overlay's upper directory is a real one, which the real /sys
	// resolves; its disk is what the real host says of it.
	upper := t.TempDir()
	real := NewHost(HostConfig{DataPath: upper}).Facts().DataDevice
	mountinfo := "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n" +
		"40 27 0:99 / /data rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=" + upper + ",workdir=/w\n" +
		"41 27 0:98 / /run rw,relatime - tmpfs tmpfs rw,size=100k\n"
	if err := os.MkdirAll(filepath.Join(root, "proc", "100"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc", "100", "mountinfo"), []byte(mountinfo), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("100", filepath.Join(root, "proc", "self")); err != nil {
		t.Fatal(err)
	}
	fixtureHost := NewHost(HostConfig{ProcRoot: filepath.Join(root, "proc"), SysRoot: filepath.Join(root, "sys")})
	realSys := NewHost(HostConfig{ProcRoot: filepath.Join(root, "proc")})
	cases := []struct {
		name    string
		h       *Host
		dev     string
		want    string
		wantErr string
	}{
		{"disk", fixtureHost, "254:0", "vda", ""},
		{"partition", fixtureHost, "254:1", "vda", ""},
		{"tmpfs", fixtureHost, "0:98", "", "tmpfs"},
		{"nowhere", fixtureHost, "0:97", "", "neither"},
		{"overlay", realSys, "0:99", real, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "overlay" && real == "" {
				t.Skip("the temporary directory is on no disk this host resolves")
			}
			got, err := c.h.diskOf(c.dev, 0)
			if got != c.want || (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("diskOf(%s) = %q, %v; want %q, error with %q", c.dev, got, err, c.want, c.wantErr)
			}
		})
	}
}

// TestCgroupUsage reads a confined server's memory under either cgroup
// version's name.
func TestCgroupUsage(t *testing.T) {
	for _, name := range []string{"memory.current", "memory.usage_in_bytes"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, name), []byte("123456\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			h := &Host{cfg: HostConfig{ServerCgroup: dir}, unavailable: map[string]string{}, files: keptFiles{}}
			if got := h.cgroupUsage(); got != 123456 {
				t.Errorf("usage %d, want 123456", got)
			}
		})
	}
	h := &Host{cfg: HostConfig{ServerCgroup: t.TempDir()}, unavailable: map[string]string{}, files: keptFiles{}}
	if got := h.cgroupUsage(); got != 0 || h.unavailable["server_memory"] == "" {
		t.Errorf("an empty cgroup read %d, unavailable %v", got, h.unavailable)
	}
}

// BenchmarkHostSample is the cost of one sample of this machine, with
// everything on (perf where it opens, a cgroup, a server tree). The server
// is this process, a small tree as a database's is, or init, whose tree is
// every process and so the worst case of the scan. At one sample a second,
// ns/op / 1e9 is the share of one CPU telemetry costs the client, which
// the %cpu@1s column shows.
func BenchmarkHostSample(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the host is read the Linux way")
	}
	for _, tree := range []struct {
		name string
		pid  int
	}{{"tree=self", os.Getpid()}, {"tree=init", 1}} {
		b.Run(tree.name, func(b *testing.B) {
			h := NewHost(HostConfig{ServerPID: tree.pid, DataPath: b.TempDir(), Perf: true,
				ServerCgroup: "/sys/fs/cgroup/memory"})
			defer h.Close()
			b.Logf("frequency source %q; unavailable %v", h.Facts().FrequencySource, h.Unavailable())
			h.Sample(time.Now())
			b.ReportAllocs()
			for b.Loop() {
				h.Sample(time.Now())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9*100, "%cpu@1s")
		})
	}
}

// TestServerCgroup: the server's memory limit and CPUs are read from the
// cgroups its root process is in, under either version; no limit, or the
// root cgroup, is none.
func TestServerCgroup(t *testing.T) {
	write := func(root, path, content string) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	write(proc, "10/cgroup", "4:memory:/dbrig/a\n3:cpuset:/dbrig/a\n1:cpu,cpuacct:/\n0::/\n")
	write(sys, "fs/cgroup/memory/dbrig/a/memory.limit_in_bytes", "335544320\n")
	write(sys, "fs/cgroup/cpuset/dbrig/a/cpuset.cpus", "0\n")
	write(proc, "20/cgroup", "0::/dbrig/b\n")
	write(sys, "fs/cgroup/unified/dbrig/b/memory.max", "1073741824\n")
	write(sys, "fs/cgroup/unified/dbrig/b/cpuset.cpus.effective", "1\n")
	write(proc, "30/cgroup", "4:memory:/free\n3:cpuset:/\n")
	write(sys, "fs/cgroup/memory/free/memory.limit_in_bytes", "9223372036854771712\n")
	write(proc, "40/cgroup", "4:memory:/\n3:cpuset:/\n0::/\n")
	for _, tc := range []struct {
		pid   int
		dir   string
		limit int64
		cpus  string
	}{
		{10, "fs/cgroup/memory/dbrig/a", 320 << 20, "0"},
		{20, "fs/cgroup/unified/dbrig/b", 1 << 30, "1"},
		{30, "", 0, ""},
		{40, "", 0, ""},
		{50, "", 0, ""}, // gone
	} {
		dir, limit, cpus := serverCgroup(proc, sys, tc.pid)
		want := ""
		if tc.dir != "" {
			want = filepath.Join(sys, tc.dir)
		}
		if dir != want || limit != tc.limit || cpus != tc.cpus {
			t.Errorf("pid %d: %q, %d, %q; want %q, %d, %q", tc.pid, dir, limit, cpus, want, tc.limit, tc.cpus)
		}
	}
}

// TestAvailable: the memory a process may still take is the host's
// MemAvailable, or less where its cgroup's limit leaves less.
func TestAvailable(t *testing.T) {
	root := t.TempDir()
	proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
	for path, content := range map[string]string{
		"proc/meminfo":   "MemTotal: 24000000 kB\nMemFree: 20000000 kB\nMemAvailable: 22000000 kB\n",
		"proc/10/cgroup": "4:memory:/dbrig/a\n",
		"sys/fs/cgroup/memory/dbrig/a/memory.limit_in_bytes": "3221225472\n",
		"sys/fs/cgroup/memory/dbrig/a/memory.usage_in_bytes": "1073741824\n",
		"proc/20/cgroup": "0::/\n",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		pid  int
		want int64
	}{{10, 2 << 30}, {20, 22000000 << 10}} {
		if got, ok := available(proc, sys, tc.pid); !ok || got != tc.want {
			t.Errorf("pid %d: %d, %v; want %d", tc.pid, got, ok, tc.want)
		}
	}
	if _, ok := available(filepath.Join(root, "none"), sys, 10); ok {
		t.Error("available without a proc file system says it knows")
	}
	if got, ok := Available(); runtime.GOOS == "linux" && (!ok || got <= 0) {
		t.Errorf("Available() = %d, %v on Linux", got, ok)
	}
}

// TestHostNodes reads the process trees of a cluster's nodes with the
// server's, in one scan: node1 is the server's tree, node2 a tree of its
// own, node3 is lost after the first sample and absent from then on, and
// node4 is elsewhere. A node named later (node5) counts from its second
// reading, its children included although the scans before found them
// outside every tree. The server's run-queue wait is left out of the
// sample after the nodes change: a node's processes not read before would
// bring their whole wait into one interval.
func TestHostNodes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the host is read the Linux way")
	}
	root := fixture(t, "testdata/host/t0/sys")
	proc := filepath.Join(root, "proc")
	// stat writes a process's stat with its parent and its user ticks.
	stat := func(pid, ppid, utime int) {
		t.Helper()
		line := fmt.Sprintf("%d (n) S %d 1 1 0 -1 0 0 0 0 0 %d 0 0 0 20 0 1 0 100 1 1\n", pid, ppid, utime)
		if err := os.MkdirAll(filepath.Join(proc, fmt.Sprint(pid)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(statPath(proc, pid), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range [][3]int{{400, 1, 100}, {401, 400, 50}, {500, 1, 10}, {600, 1, 0}, {601, 600, 0}} {
		stat(p[0], p[1], p[2])
	}
	nodes := []Node{{"node1", 200}, {"node2", 400}, {"node3", 500}, {"node4", 0}}
	h := NewHost(HostConfig{ProcRoot: proc, SysRoot: filepath.Join(root, "sys"), ClientPID: 100, ServerPID: 200, Nodes: nodes})
	defer h.Close()
	if !reflect.DeepEqual(h.Facts().Nodes, nodes) {
		t.Errorf("facts' nodes %+v, want %+v", h.Facts().Nodes, nodes)
	}
	t0 := time.Unix(1_000_000, 0)
	h.Sample(t0)
	advance(t, root, true)
	stat(400, 1, 120)
	stat(401, 400, 70)
	stat(601, 600, 30)
	if err := os.RemoveAll(filepath.Join(proc, "500")); err != nil {
		t.Fatal(err)
	}
	samples := []struct {
		step func()
		want map[string]float64
		// waited says the sample has the server's run-queue wait.
		waited bool
	}{
		// The server's tree grew by 38 ticks of 200, node2's by 40.
		{nil, map[string]float64{"node1": 19, "node2": 20}, true},
		{func() {
			h.SetNodes([]Node{{"node1", 200}, {"node2", 400}, {"node5", 600}})
			stat(601, 600, 50)
		}, map[string]float64{"node1": 0, "node2": 0}, false},
		{func() { stat(601, 600, 90) }, map[string]float64{"node1": 0, "node2": 0, "node5": 20}, true},
	}
	for i, c := range samples {
		if c.step != nil {
			c.step()
		}
		s, ok := h.Sample(t0.Add(time.Duration(i+1) * time.Second))
		if !ok {
			t.Fatalf("sample %d: none; unavailable %v", i+1, h.Unavailable())
		}
		if len(s.Nodes) != len(c.want) {
			t.Errorf("sample %d: nodes %v, want %v", i+1, s.Nodes, c.want)
		}
		for name, pct := range c.want {
			if got, ok := s.Nodes[name]; !ok || !near(got, pct) {
				t.Errorf("sample %d: %s %v (%v), want %v", i+1, name, got, ok, pct)
			}
		}
		if (s.ServerWait != nil) != c.waited {
			t.Errorf("sample %d: server wait %v, want one %v", i+1, s.ServerWait, c.waited)
		}
		if i == 0 && (s.Server == nil || !near(*s.Server, s.Nodes["node1"])) {
			t.Errorf("sample 1: server %v, want node1's %v", s.Server, s.Nodes["node1"])
		}
	}
}
