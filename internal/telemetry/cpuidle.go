package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// cpuidle reads how long each CPU spent in each idle state, from the
// cpuidle driver's counters in sysfs.
type cpuidle struct {
	names []string
	// paths are each state's time file (µs), by CPU number then state;
	// nil for a CPU not listed.
	paths [][]string
	buf   []byte
	files keptFiles
}

// openCpuidle finds the idle states, named as the first CPU names them. A
// host without a cpuidle driver (many virtual machines) has none, which
// Unavailable says.
func (h *Host) openCpuidle() *cpuidle {
	driver := h.facts.CpuidleDriver
	if len(h.cpus) == 0 {
		h.unavailable["cstates"] = "no CPUs listed"
		return nil
	}
	dirs, _ := filepath.Glob(h.cpuPath(h.cpus[0], "cpuidle", "state*"))
	if len(dirs) == 0 || driver == "" || driver == "none" {
		h.unavailable["cstates"] = fmt.Sprintf("no cpuidle states in %s (cpuidle driver: %q)", h.cfg.SysRoot, driver)
		return nil
	}
	// state10 sorts after state9.
	number := func(dir string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "state"))
		return n
	}
	sort.Slice(dirs, func(i, j int) bool { return number(dirs[i]) < number(dirs[j]) })
	c := &cpuidle{paths: make([][]string, h.cpus[len(h.cpus)-1]+1), files: h.files}
	for _, dir := range dirs {
		c.names = append(c.names, readLine(filepath.Join(dir, "name")))
	}
	for _, cpu := range h.cpus {
		for _, dir := range dirs {
			c.paths[cpu] = append(c.paths[cpu], h.cpuPath(cpu, "cpuidle", filepath.Base(dir), "time"))
		}
	}
	if _, err := os.Stat(c.paths[h.cpus[0]][0]); err != nil {
		h.unavailable["cstates"] = err.Error()
		return nil
	}
	return c
}

// read takes every state's cumulative time into buf, reused between
// samples.
func (c *cpuidle) read(buf [][]uint64) [][]uint64 {
	if len(buf) != len(c.paths) {
		buf = make([][]uint64, len(c.paths))
	}
	for cpu, paths := range c.paths {
		if len(buf[cpu]) != len(paths) {
			buf[cpu] = make([]uint64, len(paths))
		}
		for i, path := range paths {
			buf[cpu][i], c.buf = c.files.readUint(path, c.buf)
		}
	}
	return buf
}

// residency is each state's share of the interval, in percent.
func (c *cpuidle) residency(prev, cur [][]uint64, dt float64) [][]float64 {
	out := make([][]float64, len(c.paths))
	for cpu, paths := range c.paths {
		if len(paths) == 0 || len(prev) <= cpu || len(prev[cpu]) != len(paths) {
			continue
		}
		out[cpu] = make([]float64, len(paths))
		for i := range paths {
			if cur[cpu][i] >= prev[cpu][i] {
				out[cpu][i] = float64(cur[cpu][i]-prev[cpu][i]) / (dt * 1e6) * 100
			}
		}
	}
	return out
}
