package telemetry

import (
	"errors"
	"fmt"
	"os"
)

// frequency is a source of CPU frequency by CPU number.
type frequency interface {
	source() string
	// read takes the cumulative counters, if the source has any.
	read(buf []perfCount) []perfCount
	// mhz is the interval's average and busy frequency by CPU; busy is
	// nil where the source cannot tell busy time apart.
	mhz(h *Host, dt float64) (avg, busy []float64)
	close() error
}

var (
	_ frequency = (*perfCycles)(nil)
	_ frequency = (*cpufreqFiles)(nil)
	_ frequency = noFrequency{}
)

// perfCount is one read of a cycle counter: its count, and how long it was
// enabled and actually counting (less when counters were multiplexed), ns.
type perfCount struct {
	value, enabled, running uint64
}

// openFrequency picks the best source this host has: turbostat's way (cycles
// over time, and over busy time) when perf counters open, else the cpufreq
// driver's figure.
func (h *Host) openFrequency() frequency {
	var why []string
	if h.cfg.Perf {
		p, err := openPerfCycles(h.cpus)
		if err == nil {
			return p
		}
		why = append(why, fmt.Sprintf("no perf cycle counter (%v)", err))
	} else {
		why = append(why, "perf counters not asked for")
	}
	if len(h.cpus) > 0 {
		for _, name := range []string{"cpuinfo_avg_freq", "scaling_cur_freq"} {
			if _, err := os.Stat(h.cpuPath(h.cpus[0], "cpufreq", name)); err == nil {
				f := &cpufreqFiles{name: name, paths: make([]string, h.cpus[len(h.cpus)-1]+1)}
				for _, cpu := range h.cpus {
					f.paths[cpu] = h.cpuPath(cpu, "cpufreq", name)
				}
				return f
			}
		}
	}
	why = append(why, "no cpufreq in /sys")
	h.unavailable["frequency"] = why[0] + ", " + why[1]
	return noFrequency{}
}

// perfCycles counts each CPU's cycles with perf_event_open, as turbostat
// counts APERF where it can read MSRs.
type perfCycles struct {
	fds []int // by CPU number; -1 where none opened
	buf [24]byte
}

func openPerfCycles(cpus []int) (*perfCycles, error) {
	if len(cpus) == 0 {
		return nil, errors.New("no CPUs listed")
	}
	p := &perfCycles{fds: make([]int, cpus[len(cpus)-1]+1)}
	for i := range p.fds {
		p.fds[i] = -1
	}
	for _, cpu := range cpus {
		fd, err := openCycles(cpu)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("perf_event_open: %w", err)
		}
		p.fds[cpu] = fd
	}
	return p, nil
}

func (p *perfCycles) source() string { return "perf cycles" }

func (p *perfCycles) read(buf []perfCount) []perfCount {
	if cap(buf) < len(p.fds) {
		buf = make([]perfCount, len(p.fds))
	}
	buf = buf[:len(p.fds)]
	for cpu, fd := range p.fds {
		buf[cpu] = perfCount{}
		if fd >= 0 {
			buf[cpu], _ = readCycles(fd, &p.buf)
		}
	}
	return buf
}

// mhz scales each count for multiplexing (the share of the interval the
// counter really counted), then divides by the time it was enabled (a
// CPU-wide counter is enabled all the time) and by the CPU's busy time from
// /proc/stat.
func (p *perfCycles) mhz(h *Host, _ float64) (avg, busy []float64) {
	prev, cur := h.prev.cycles, h.cur.cycles
	if len(prev) != len(p.fds) || len(cur) != len(p.fds) {
		return nil, nil
	}
	avg, busy = make([]float64, len(p.fds)), make([]float64, len(p.fds))
	for cpu := range p.fds {
		// A failed read leaves zeros, which must not pass for a count.
		if cur[cpu].enabled <= prev[cpu].enabled || cur[cpu].running <= prev[cpu].running {
			continue
		}
		enabled := float64(cur[cpu].enabled - prev[cpu].enabled)
		running := float64(cur[cpu].running - prev[cpu].running)
		cycles := float64(cur[cpu].value-prev[cpu].value) * enabled / running
		avg[cpu] = cycles / enabled * 1e3
		b := busySeconds(h.cur.stat.CPU[int64(cpu)]) - busySeconds(h.prev.stat.CPU[int64(cpu)])
		if b > 0 {
			busy[cpu] = cycles / b / 1e6
		}
	}
	return avg, busy
}

func (p *perfCycles) close() error {
	var errs []error
	for i, fd := range p.fds {
		if fd >= 0 {
			errs = append(errs, closeFD(fd))
			p.fds[i] = -1
		}
	}
	return errors.Join(errs...)
}

// cpufreqFiles reads the cpufreq driver's figure at each sample's end:
// cpuinfo_avg_freq is the hardware's average over a recent tick, and
// scaling_cur_freq the driver's last request or estimate. Neither tells
// busy time from idle, so BusyMHz stays nil.
type cpufreqFiles struct {
	name  string
	paths []string // by CPU number; "" where none
	buf   []byte
}

func (f *cpufreqFiles) source() string                   { return f.name }
func (f *cpufreqFiles) read(buf []perfCount) []perfCount { return buf[:0] }
func (f *cpufreqFiles) close() error                     { return nil }

func (f *cpufreqFiles) mhz(h *Host, _ float64) (avg, busy []float64) {
	avg = make([]float64, len(f.paths))
	for cpu, path := range f.paths {
		if path == "" {
			continue
		}
		var khz uint64
		if khz, f.buf = h.files.readUint(path, f.buf); khz > 0 {
			avg[cpu] = float64(khz) / 1e3
		}
	}
	return avg, nil
}

// noFrequency is a host with no source of frequency.
type noFrequency struct{}

func (noFrequency) source() string                   { return "" }
func (noFrequency) read(buf []perfCount) []perfCount { return buf[:0] }
func (noFrequency) mhz(*Host, float64) ([]float64, []float64) {
	return nil, nil
}
func (noFrequency) close() error { return nil }
