package telemetry

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sysstatReport is the part of sysstat's JSON (mpstat -o JSON, iostat -o
// JSON) that the comparison reads.
type sysstatReport struct {
	Sysstat struct {
		Hosts []struct {
			Statistics []struct {
				CPULoad []struct {
					CPU    string  `json:"cpu"`
					IOWait float64 `json:"iowait"`
					Steal  float64 `json:"steal"`
					Idle   float64 `json:"idle"`
				} `json:"cpu-load"`
				Disk []struct {
					Device string  `json:"disk_device"`
					Reads  float64 `json:"r/s"`
					Writes float64 `json:"w/s"`
				} `json:"disk"`
			} `json:"statistics"`
		} `json:"hosts"`
	} `json:"sysstat"`
}

// TestAgreesWithSysstat samples the host at 1 s alongside mpstat and
// iostat, under a busy goroutine and a stream of synced writes, and
// compares the means over the same seconds: busy CPU within 5 points of
// mpstat's, the busiest disk's IOPS within 5% of iostat's.
//
// The three start together and each takes its readings a second apart, so
// their windows differ only by how long the tools take to start, a few
// milliseconds. The first interval, which holds that start, is left out of
// both means. Over the remaining seconds the load is steady, so that
// offset moves a mean by its share of the window (well under 1%): a 5%
// gap in IOPS is a real disagreement (an IO counted twice, a partition's
// IO added to its disk's, a wrong interval), not jitter.
func TestAgreesWithSysstat(t *testing.T) {
	needSysstat(t, "mpstat", "iostat")
	const n = 8 // intervals of 1 s
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var load sync.WaitGroup
	load.Go(func() { spin(ctx) })
	load.Go(func() { syncWrites(ctx, t) })
	defer load.Wait()
	defer cancel()
	// Let the load settle before the window opens.
	time.Sleep(500 * time.Millisecond)

	mpstat := exec.Command("mpstat", "-P", "ALL", "-o", "JSON", "1", strconv.Itoa(n))
	iostat := exec.Command("iostat", "-dxy", "-o", "JSON", "1", strconv.Itoa(n))
	outputs := make([][]byte, 2)
	var tools sync.WaitGroup
	for i, cmd := range []*exec.Cmd{mpstat, iostat} {
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		tools.Go(func() {
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("%s: %v", cmd, err)
			}
			outputs[i] = out
		})
	}
	h := NewHost(HostConfig{})
	defer h.Close()
	start := time.Now()
	h.Sample(start)
	var ours []HostSample
	for k := 1; k <= n; k++ {
		time.Sleep(time.Until(start.Add(time.Duration(k) * time.Second)))
		s, ok := h.Sample(time.Now())
		if !ok {
			t.Fatalf("no sample; unavailable: %v", h.Unavailable())
		}
		ours = append(ours, s)
	}
	tools.Wait()
	cancel()
	if t.Failed() {
		return
	}
	var cpu, disk sysstatReport
	for i, r := range []*sysstatReport{&cpu, &disk} {
		if err := json.Unmarshal(outputs[i], r); err != nil || len(r.Sysstat.Hosts) != 1 {
			t.Fatalf("sysstat's JSON: %v\n%s", err, outputs[i])
		}
	}
	cpuStats, diskStats := cpu.Sysstat.Hosts[0].Statistics, disk.Sysstat.Hosts[0].Statistics
	if len(cpuStats) != n || len(diskStats) != n {
		t.Fatalf("mpstat gave %d reports and iostat %d, want %d each", len(cpuStats), len(diskStats), n)
	}

	// Busy as mpstat leaves it: whatever is not idle, iowait or steal.
	var ourBusy, theirBusy float64
	for k := 1; k < n; k++ {
		ourBusy += ours[k].CPU.Busy() / (n - 1)
		for _, c := range cpuStats[k].CPULoad {
			if c.CPU == "all" {
				theirBusy += (100 - c.Idle - c.IOWait - c.Steal) / (n - 1)
			}
		}
	}
	t.Logf("busy: dbrig %.2f%%, mpstat %.2f%%", ourBusy, theirBusy)
	if math.Abs(ourBusy-theirBusy) > 5 {
		t.Errorf("busy CPU: dbrig %.2f%%, mpstat %.2f%%: more than 5 points apart", ourBusy, theirBusy)
	}

	theirIOPS := map[string]float64{}
	for k := 1; k < n; k++ {
		for _, d := range diskStats[k].Disk {
			theirIOPS[d.Device] += (d.Reads + d.Writes) / (n - 1)
		}
	}
	busiest := ""
	for dev, iops := range theirIOPS {
		if busiest == "" || iops > theirIOPS[busiest] {
			busiest = dev
		}
	}
	var ourIOPS float64
	for k := 1; k < n; k++ {
		for _, d := range ours[k].Disks {
			if d.Device == busiest {
				ourIOPS += (d.ReadIOPS + d.WriteIOPS) / (n - 1)
			}
		}
	}
	t.Logf("IOPS of %s: dbrig %.1f, iostat %.1f", busiest, ourIOPS, theirIOPS[busiest])
	if theirIOPS[busiest] < 100 {
		t.Fatalf("the load made only %.1f IOPS on %s, too few to compare", theirIOPS[busiest], busiest)
	}
	if gap := math.Abs(ourIOPS-theirIOPS[busiest]) / theirIOPS[busiest]; gap > 0.05 {
		t.Errorf("IOPS of %s: dbrig %.1f, iostat %.1f: %.1f%% apart, more than 5%%",
			busiest, ourIOPS, theirIOPS[busiest], gap*100)
	}
}

// needSysstat skips the test where the tools are missing, unless
// DBRIG_REQUIRE_SYSSTAT=1 says they must be there.
func needSysstat(t *testing.T, tools ...string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("sysstat and the host readers are Linux's")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("DBRIG_REQUIRE_SYSSTAT") == "1" {
				t.Fatalf("%s is not on PATH and DBRIG_REQUIRE_SYSSTAT=1 (apt-get install sysstat)", tool)
			}
			t.Skipf("%s is not on PATH (apt-get install sysstat to compare with it)", tool)
		}
	}
}

// TestServerAgreesWithPidstat samples a "server" (this test binary run
// again as TestBusyServer: two threads that work 0.3 ms and sleep 0.2 ms
// in turn, as a database's backends do between a client's statements)
// alongside pidstat, and compares the server's share of all CPUs with
// pidstat's %CPU divided by the CPUs. Such a load makes the CPUs go idle
// thousands of times a second, which leaves /proc/stat's ticks short of
// the elapsed time; the share, divided by the elapsed time as pidstat's
// is, must agree within 2% of itself.
func TestServerAgreesWithPidstat(t *testing.T) {
	needSysstat(t, "pidstat")
	const n = 6
	server := exec.Command(os.Args[0], "-test.run=^TestBusyServer$")
	server.Env = append(os.Environ(), "DBRIG_BUSY_SERVER=1")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { server.Process.Kill(); server.Wait() }()
	time.Sleep(300 * time.Millisecond)
	pidstat := exec.Command("pidstat", "-u", "-h", "-p", strconv.Itoa(server.Process.Pid), "1", strconv.Itoa(n))
	pidstat.Env = append(os.Environ(), "LC_ALL=C")
	var out []byte
	var tool sync.WaitGroup
	tool.Go(func() { out, _ = pidstat.Output() })
	h := NewHost(HostConfig{ServerPID: server.Process.Pid})
	defer h.Close()
	start := time.Now()
	h.Sample(start)
	var ours float64
	for k := 1; k <= n; k++ {
		time.Sleep(time.Until(start.Add(time.Duration(k) * time.Second)))
		s, ok := h.Sample(time.Now())
		if !ok || s.Server == nil {
			t.Fatalf("no server sample; unavailable: %v", h.Unavailable())
		}
		if k > 1 {
			ours += *s.Server / (n - 1)
		}
	}
	tool.Wait()
	// pidstat -h: Time UID PID %usr %system %guest %wait %CPU CPU Command,
	// one line a second; the first second holds the tools' start.
	var theirs []float64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[2] != strconv.Itoa(server.Process.Pid) {
			continue
		}
		if v, err := strconv.ParseFloat(f[7], 64); err == nil {
			theirs = append(theirs, v/float64(len(h.cpus)))
		}
	}
	if len(theirs) != n {
		t.Fatalf("pidstat gave %d readings, want %d:\n%s", len(theirs), n, out)
	}
	var their float64
	for _, v := range theirs[1:] {
		their += v / (n - 1)
	}
	t.Logf("server CPU: dbrig %.2f%%, pidstat %.2f%% of all CPUs", ours, their)
	// Alone on the host the two threads keep about 60% of its CPUs busy;
	// beside the other packages' tests (make test) they got 7.9%, which
	// compares as well. Under 2% there is too little to compare.
	if their < 2 {
		t.Fatalf("server CPU: pidstat %.2f%% of all CPUs: the server hardly ran, nothing to compare", their)
	}
	if math.Abs(ours-their) > 0.02*their {
		t.Errorf("server CPU: dbrig %.2f%%, pidstat %.2f%%: more than 2%% apart", ours, their)
	}
}

// TestBusyServer is the server of TestServerAgreesWithPidstat, run only
// as its child.
func TestBusyServer(t *testing.T) {
	if os.Getenv("DBRIG_BUSY_SERVER") != "1" {
		t.Skip("the child of TestServerAgreesWithPidstat")
	}
	var threads sync.WaitGroup
	for range 2 {
		threads.Go(func() {
			runtime.LockOSThread()
			for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
				for spin := time.Now().Add(300 * time.Microsecond); time.Now().Before(spin); {
				}
				time.Sleep(200 * time.Microsecond)
			}
		})
	}
	threads.Wait()
}

// spin keeps one CPU busy until ctx ends.
func spin(ctx context.Context) {
	for x := 0; ctx.Err() == nil; x++ {
	}
}

// syncWrites writes 4 KiB blocks at random places in a file on the
// temporary directory's disk, syncing each, so that every block is at
// least one write IO of that disk. It rests a millisecond between blocks
// so as not to fill the second CPU with system time, which would leave
// the busy comparison nothing to tell apart (both at 100%).
func syncWrites(ctx context.Context, t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "io"))
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	block := make([]byte, 4096)
	for ctx.Err() == nil {
		if _, err := f.WriteAt(block, int64(rand.IntN(4096))*4096); err != nil {
			t.Error(err)
			return
		}
		if err := f.Sync(); err != nil {
			t.Error(err)
			return
		}
		time.Sleep(time.Millisecond)
	}
}
