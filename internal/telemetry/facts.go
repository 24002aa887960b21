package telemetry

import (
	"path/filepath"
	"strconv"
)

// readFacts reads the host's settings that explain a result. The kernel,
// the CPUs' model and the memory are the run document's host facts.
func (h *Host) readFacts() {
	proc, sys := h.cfg.ProcRoot, h.cfg.SysRoot
	f := &h.facts
	f.TransparentHuge = selected(readLine(filepath.Join(sys, "kernel/mm/transparent_hugepage/enabled")))
	f.NrHugepages, _ = strconv.ParseInt(readLine(filepath.Join(proc, "sys/vm/nr_hugepages")), 10, 64)
	f.CpuidleDriver = readLine(filepath.Join(sys, "devices/system/cpu/cpuidle/current_driver"))
	f.CpuidleGovernor = readLine(filepath.Join(sys, "devices/system/cpu/cpuidle/current_governor"))
	if len(h.cpus) > 0 {
		f.CpufreqDriver = readLine(h.cpuPath(h.cpus[0], "cpufreq/scaling_driver"))
		f.CpufreqGovernor = readLine(h.cpuPath(h.cpus[0], "cpufreq/scaling_governor"))
	}
	f.OnlineCPUs = len(h.cpus)
	f.ServerPID = h.cfg.ServerPID
}
