package server

import (
	"github.com/prometheus/procfs"
)

// What dbrig reads of /proc for its servers goes through procfs, as the
// telemetry's readers do. Where there is no /proc (macOS) each reader says
// it cannot tell.

// IsZombie reports whether pid has exited and waits to be reaped: where
// PID 1 is slow to reap orphans (some containers and VMs), a killed
// server lingers as a zombie that looks alive to a signal 0.
func IsZombie(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	return err == nil && (st.State == "Z" || st.State == "X")
}

// HugePages is HugePages_Total in /proc/meminfo; -1 when it cannot tell,
// so that only a known zero stops a sweep.
func HugePages() int { return hugePagesIn(procfs.DefaultMountPoint) }

// hugePagesIn reads the meminfo of the proc file system mounted at root.
func hugePagesIn(root string) int {
	fs, err := procfs.NewFS(root)
	if err != nil {
		return -1
	}
	mi, err := fs.Meminfo()
	if err != nil || mi.HugePagesTotal == nil {
		return -1
	}
	return int(*mi.HugePagesTotal)
}
