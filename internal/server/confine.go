package server

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/target"
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

// memoryUnits are PostgreSQL's: a kB, MB or GB is 1024 of the one below,
// so that memory: 2GB and shared_buffers=2GB in one spec mean the same
// size. The IEC spellings and the bare letters mean the same.
var memoryUnits = []struct {
	names []string
	size  int64
}{
	{[]string{"tb", "tib", "t"}, 1 << 40},
	{[]string{"gb", "gib", "g"}, 1 << 30},
	{[]string{"mb", "mib", "m"}, 1 << 20},
	{[]string{"kb", "kib", "k"}, 1 << 10},
}

// ParseMemory reads a size such as 512MB, 2GB or 1.5GiB; a bare number is
// bytes.
func ParseMemory(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	end := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(t)
	}
	num, unit := t[:end], strings.TrimSpace(t[end:])
	v, err := strconv.ParseFloat(num, 64)
	size := int64(0)
	if unit == "" || unit == "b" {
		size = 1
	}
	for _, u := range memoryUnits {
		if slices.Contains(u.names, unit) {
			size = u.size
		}
	}
	switch n := int64(v * float64(size)); {
	case err != nil || size == 0:
		return 0, fmt.Errorf("want a size such as 512MB, 2GB or 1.5GiB, got %q", s)
	case n < 16<<20:
		return 0, fmt.Errorf("%s is less than 16MB, too little for a server", s)
	default:
		return n, nil
	}
}

// FormatMemory writes bytes in the largest unit that divides them, as
// ParseMemory reads it back: 2GB, 1536MB.
func FormatMemory(n int64) string {
	for _, u := range memoryUnits {
		if n%u.size == 0 && n >= u.size {
			return strconv.FormatInt(n/u.size, 10) + strings.ToUpper(u.names[0])
		}
	}
	return strconv.FormatInt(n, 10)
}

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
// target.UserError.
func ParseConfinement(memory, cpus string) (Confinement, error) {
	var c Confinement
	var err error
	if memory != "" {
		if c.Memory, err = ParseMemory(memory); err != nil {
			return c, target.Userf("memory: %v", err)
		}
	}
	if cpus != "" {
		if c.CPUs, err = ParseCPUs(cpus); err != nil {
			return c, target.Userf("cpus: %v", err)
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
