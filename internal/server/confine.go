package server

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
)

// Confinement is the machine a managed server is given: a memory size
// that its processes' page cache counts against too, and a set of CPUs.
// It makes "the same database on a machine with 1, 2 and 4 GB" a sweep on
// one host. The zero Confinement leaves the server free.
type Confinement struct {
	// Memory is in bytes; 0 means no limit.
	Memory int64
	// CPUs is a cpuset list in canonical form ("0-1", "0,2"); "" means all.
	CPUs string
}

// IsZero tells that nothing is confined.
func (c Confinement) IsZero() bool { return c == Confinement{} }

// ConfineNodes is a cluster's Confine: a cluster's nodes share the host,
// and dbrig confines one server at a time, so any confinement is refused.
func ConfineNodes(c Confinement) error {
	if c.IsZero() {
		return nil
	}
	return exitcode.Userf("--memory and --cpus confine one server: a cluster's nodes run unconfined")
}

// String is "memory 2GB, cpus 0-1", or "" when nothing is confined.
func (c Confinement) String() string {
	var parts []string
	if c.Memory > 0 {
		parts = append(parts, "memory "+FormatMemory(c.Memory))
	}
	if c.CPUs != "" {
		parts = append(parts, "cpus "+c.CPUs)
	}
	return strings.Join(parts, ", ")
}

// ParseMemory reads a size such as 512MB, 2GB or 1.5GiB (human.ParseSize)
// that is enough for a server.
func ParseMemory(s string) (int64, error) {
	n, err := human.ParseSize(s)
	switch {
	case err != nil:
		return 0, err
	case n < 16<<20:
		return 0, fmt.Errorf("%s is less than 16MB, too little for a server", s)
	}
	return n, nil
}

// FormatMemory writes bytes as ParseMemory reads them back: 2GB, 1536MB.
func FormatMemory(n int64) string { return human.FormatSize(n) }

// ParseCPUs reads a cpuset list ("0", "0-1", "0,2") and checks that every
// CPU in it is online; it returns the list in canonical form.
func ParseCPUs(s string) (string, error) {
	cpus, err := parseCPUList(s)
	if err != nil || len(cpus) == 0 {
		return "", fmt.Errorf("want a CPU list such as 0, 0-1 or 0,2, got %q", s)
	}
	online, err := OnlineCPUs()
	if err != nil {
		return "", err
	}
	for _, c := range cpus {
		if !slices.Contains(online, c) {
			return "", fmt.Errorf("CPU %d is not online (online: %s)", c, FormatCPUs(online))
		}
	}
	return FormatCPUs(cpus), nil
}

// ParseConfinement reads the memory and cpus the user gave, either of them
// "", as a spec or the server command spells them; what is wrong is a
// exitcode.UserError.
func ParseConfinement(memory, cpus string) (Confinement, error) {
	var c Confinement
	var err error
	if memory != "" {
		if c.Memory, err = ParseMemory(memory); err != nil {
			return c, exitcode.Userf("memory: %v", err)
		}
	}
	if cpus != "" {
		if c.CPUs, err = ParseCPUs(cpus); err != nil {
			return c, exitcode.Userf("cpus: %v", err)
		}
	}
	return c, nil
}

// onlinePath lists the CPUs the kernel runs on; a variable for tests.
var onlinePath = "/sys/devices/system/cpu/online"

// OnlineCPUs lists the online CPUs.
func OnlineCPUs() ([]int, error) {
	b, err := os.ReadFile(onlinePath)
	if err != nil {
		return nil, fmt.Errorf("cannot tell which CPUs are online: %w", err)
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// parseCPUList reads the kernel's list format, sorted and without repeats.
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU range %q", part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// FormatCPUs writes sorted CPUs in the kernel's list format, runs as ranges.
func FormatCPUs(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		part := strconv.Itoa(cpus[i])
		if j > i {
			part += "-" + strconv.Itoa(cpus[j])
		}
		parts = append(parts, part)
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Confined is what a kind's Server keeps of its confinement: the one the
// starts that follow run in, and its cgroup (nil when unconfined).
type Confined struct {
	conf   Confinement
	cgroup *Cgroup
}

// Confine sets the confinement of the starts that follow, after checking
// that this host can apply it; a running server keeps its own.
func (c *Confined) Confine(dir string, running bool, conf Confinement) error {
	if running {
		return exitcode.Userf("the server in %s is running: stop it before changing what it is confined to", dir)
	}
	if !conf.IsZero() {
		if err := NewCgroup(dir, conf).Check(); err != nil {
			return err
		}
	}
	c.Set(dir, conf)
	return nil
}

// Set is Confine without the checks, for a server found as another
// process left it.
func (c *Confined) Set(dir string, conf Confinement) {
	c.conf, c.cgroup = conf, nil
	if !conf.IsZero() {
		c.cgroup = NewCgroup(dir, conf)
	}
}

// Get is the confinement set.
func (c *Confined) Get() Confinement { return c.conf }

// Create makes the cgroup before a start, when confined.
func (c *Confined) Create() error {
	if c.cgroup == nil {
		return nil
	}
	return c.cgroup.Create()
}

// Remove removes the cgroup of a stopped server, if it had one.
func (c *Confined) Remove() error {
	if c.cgroup == nil {
		return nil
	}
	return c.cgroup.Remove()
}

// Start starts cmd, inside the cgroup when confined, so that the server
// and every process it forks are born there.
func (c *Confined) Start(cmd *exec.Cmd) error {
	if c.cgroup == nil {
		return cmd.Start()
	}
	return c.cgroup.Start(cmd)
}

// CombinedOutput is cmd.CombinedOutput, inside the cgroup when confined.
func (c *Confined) CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	if c.cgroup == nil {
		return cmd.CombinedOutput()
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := c.cgroup.Start(cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	return out.Bytes(), err
}
