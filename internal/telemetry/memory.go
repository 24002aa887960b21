package telemetry

import (
	"path/filepath"
)

// memory reads the host's memory now, and a confined server's use.
func (h *Host) memory() Memory {
	var m Memory
	if mi, err := h.proc.Meminfo(); err != nil {
		h.unavailable["memory"] = err.Error()
	} else {
		v := func(p *uint64) int64 {
			if p == nil {
				return 0
			}
			return int64(*p)
		}
		m = Memory{
			Free:         v(mi.MemFreeBytes),
			Available:    v(mi.MemAvailableBytes),
			Cached:       v(mi.CachedBytes),
			Dirty:        v(mi.DirtyBytes),
			Writeback:    v(mi.WritebackBytes),
			SwapUsed:     v(mi.SwapTotalBytes) - v(mi.SwapFreeBytes),
			HugeTotal:    v(mi.HugePagesTotal),
			HugeFree:     v(mi.HugePagesFree),
			HugeReserved: v(mi.HugePagesRsvd),
		}
	}
	if h.cfg.ServerCgroup != "" {
		m.ServerCgroup = h.cgroupUsage()
	}
	return m
}

// cgroupUsage reads a memory cgroup's use under either version's name
// (page cache included in both).
func (h *Host) cgroupUsage() int64 {
	for _, name := range []string{"memory.current", "memory.usage_in_bytes"} {
		var v uint64
		if v, h.cgroupBuf = h.files.readUint(filepath.Join(h.cfg.ServerCgroup, name), h.cgroupBuf); v > 0 {
			return int64(v)
		}
	}
	h.unavailable["server_memory"] = "no memory.current or memory.usage_in_bytes in " + h.cfg.ServerCgroup
	return 0
}
