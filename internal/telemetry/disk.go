package telemetry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/procfs/blockdevice"
)

// readDisks learns which devices are whole disks and which one holds the
// data. The whole disks are those /sys/block lists; partitions are left
// out, as their IO is already their disk's.
func (h *Host) readDisks() {
	if names, err := h.block.SysBlockDevices(); err == nil {
		h.wholeDisks = map[string]bool{}
		for _, name := range names {
			h.wholeDisks[name] = true
		}
	}
	if h.cfg.DataPath == "" {
		h.unavailable["data_device"] = "the data path is not known"
		return
	}
	h.facts.DataPath = h.cfg.DataPath
	dev, err := h.dataDevice(h.cfg.DataPath)
	if err != nil {
		h.unavailable["data_device"] = fmt.Sprintf("unknown: %v", err)
		return
	}
	h.facts.DataDevice = dev
	h.facts.DataDeviceSched = selected(readLine(filepath.Join(h.cfg.SysRoot, "block", dev, "queue", "scheduler")))
}

// dataDevice is the whole disk, as /proc/diskstats names it, that holds path.
func (h *Host) dataDevice(path string) (string, error) {
	dev, _, err := deviceNumbers(path)
	if err != nil {
		return "", err
	}
	return h.diskOf(dev, 0)
}

// diskOf names the whole disk behind a device number. A block device's
// number leads through /sys/dev/block to its disk (a partition's parent).
// A filesystem without one (overlayfs in a container, btrfs) is looked up
// in mountinfo: overlayfs by its upper directory, others by their source
// device.
func (h *Host) diskOf(dev string, depth int) (string, error) {
	link := filepath.Join(h.cfg.SysRoot, "dev", "block", dev)
	if target, err := os.Readlink(link); err == nil {
		if _, err := os.Stat(filepath.Join(link, "partition")); err == nil {
			return filepath.Base(filepath.Dir(target)), nil
		}
		return filepath.Base(target), nil
	}
	if depth > 4 {
		return "", fmt.Errorf("device %s: too many layers of mounts", dev)
	}
	mounts, err := h.proc.GetMounts()
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		if m.MajorMinorVer != dev {
			continue
		}
		switch {
		case m.FSType == "overlay" && m.SuperOptions["upperdir"] != "":
			next, _, err := deviceNumbers(m.SuperOptions["upperdir"])
			if err != nil {
				return "", err
			}
			return h.diskOf(next, depth+1)
		case strings.HasPrefix(m.Source, "/dev/"):
			_, next, err := deviceNumbers(m.Source)
			if err != nil {
				return "", err
			}
			return h.diskOf(next, depth+1)
		default:
			return "", fmt.Errorf("device %s is %s (%s), no block device", dev, m.FSType, m.Source)
		}
	}
	return "", errors.New("device " + dev + " is in neither /sys/dev/block nor mountinfo")
}

// diskRates are the interval's figures of every whole disk that has done
// any IO since boot (idle loop, ram and zram devices stay out), and of the
// data's disk whatever it did.
func (h *Host) diskRates(dt float64) []DiskRates {
	var out []DiskRates
	for i := range h.cur.disks {
		cur := &h.cur.disks[i]
		name := cur.DeviceName
		if h.wholeDisks != nil && !h.wholeDisks[name] {
			continue
		}
		if cur.ReadIOs+cur.WriteIOs+cur.DiscardIOs+cur.IOsInProgress == 0 && name != h.facts.DataDevice {
			continue
		}
		prev := findDisk(h.prev.disks, i, name)
		if prev == nil {
			continue
		}
		out = append(out, diskDelta(prev, cur, dt))
	}
	return out
}

// findDisk finds a device in the previous reading, where it is almost
// always at the same index.
func findDisk(disks []blockdevice.Diskstats, i int, name string) *blockdevice.Diskstats {
	if i < len(disks) && disks[i].DeviceName == name {
		return &disks[i]
	}
	for j := range disks {
		if disks[j].DeviceName == name {
			return &disks[j]
		}
	}
	return nil
}

// diskDelta computes what iostat -x does: IOPS and MB/s per direction, the
// average time an IO took (queue included) and the share of the interval
// the device had IO in flight.
func diskDelta(prev, cur *blockdevice.Diskstats, dt float64) DiskRates {
	d := func(a, b uint64) float64 {
		if b < a {
			return 0
		}
		return float64(b - a)
	}
	reads, writes := d(prev.ReadIOs, cur.ReadIOs), d(prev.WriteIOs, cur.WriteIOs)
	r := DiskRates{
		Device:    cur.DeviceName,
		ReadIOPS:  reads / dt,
		WriteIOPS: writes / dt,
		ReadMBps:  d(prev.ReadSectors, cur.ReadSectors) * 512 / 1e6 / dt,
		WriteMBps: d(prev.WriteSectors, cur.WriteSectors) * 512 / 1e6 / dt,
		UtilPct:   d(prev.IOsTotalTicks, cur.IOsTotalTicks) / (dt * 1e3) * 100,
	}
	if reads > 0 {
		r.ReadAwaitMs = d(prev.ReadTicks, cur.ReadTicks) / reads
	}
	if writes > 0 {
		r.WriteAwaitMs = d(prev.WriteTicks, cur.WriteTicks) / writes
	}
	return r
}
