package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Cgroup is where a confined server's processes live: the cgroup
// dbrig/NAME under the root of each hierarchy that holds a controller the
// confinement needs (memory and cpuset; on cgroup v1 those are two
// hierarchies, on v2 one). NAME comes from the server's directory, so a
// server finds its cgroup again from another process, and a crashed
// server's leftover is reused rather than in the way.
//
// The cgroups sit at the hierarchy's root, not under dbrig's own cgroup:
// their limits are the machine the server gets, whatever slice dbrig was
// started in, and on v2 a child of a cgroup holding processes could not
// have controllers of its own.
type Cgroup struct {
	name string
	conf Confinement
	hs   []hierarchy // found by Check
}

// hierarchy is one mounted cgroup hierarchy, and the controllers of it
// that a confinement uses.
type hierarchy struct {
	mount       string
	v2          bool
	readOnly    bool
	controllers []string
}

// procRoot is where the mounts are read (procRoot/self/mountinfo), and
// the hierarchies' mount points are used as they are found, so a test can
// hand in a fixture tree.
var procRoot = procfs.DefaultMountPoint

// NewCgroup is the cgroup of the server in serverDir, confined by c;
// nothing is read or written yet.
func NewCgroup(serverDir string, c Confinement) *Cgroup {
	return &Cgroup{name: cgroupName(serverDir), conf: c}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// cgroupName is the directory's base name, for a person reading
// /proc/PID/cgroup, and a hash of its whole path, for uniqueness.
func cgroupName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	sum := sha256.Sum256([]byte(dir))
	base := unsafeName.ReplaceAllString(filepath.Base(dir), "_")
	return base[:min(len(base), 40)] + "-" + hex.EncodeToString(sum[:4])
}

// controllers are those the confinement needs.
func (c Confinement) controllers() []string {
	var out []string
	if c.Memory > 0 {
		out = append(out, "memory")
	}
	if c.CPUs != "" {
		out = append(out, "cpuset")
	}
	return out
}

// Check finds the hierarchies the confinement needs and makes sure this
// process may create cgroups in them, before anything runs: a missing
// controller, a read-only mount or a user who is not allowed is one line,
// a exitcode.UserError.
func (g *Cgroup) Check() error {
	if err := g.find(); err != nil {
		return err
	}
	for _, h := range g.hs {
		if h.readOnly {
			return exitcode.Userf("confining the server needs to write cgroups, and %s is mounted read-only (in a container, give it a writable cgroup mount)", h.mount)
		}
		dir := filepath.Join(h.mount, "dbrig")
		if _, err := os.Stat(dir); err != nil {
			dir = h.mount
		}
		if err := unix.Access(dir, unix.W_OK); err != nil {
			return exitcode.Userf("confining the server needs to write cgroups, and %s is not writable by this user (%v): run dbrig as root", dir, err)
		}
	}
	return nil
}

// find locates the hierarchies once; reading them needs no privilege.
func (g *Cgroup) find() error {
	if g.hs != nil {
		return nil
	}
	mounts, err := readMounts()
	if err != nil {
		return exitcode.Userf("confining the server needs Linux cgroups, and %s cannot be read: %v", filepath.Join(procRoot, "self", "mountinfo"), err)
	}
	g.hs, err = findHierarchies(mounts, g.conf.controllers())
	return err
}

func readMounts() ([]*procfs.MountInfo, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	return fs.GetMounts()
}

// findHierarchies picks, for each controller, the cgroup v1 hierarchy
// that holds it, else the v2 hierarchy if its root offers it. A controller
// is in one hierarchy at most, so the two never compete.
func findHierarchies(mounts []*procfs.MountInfo, need []string) ([]hierarchy, error) {
	var v1 []hierarchy
	var v2 *hierarchy
	for _, m := range mounts {
		_, ro := m.Options["ro"]
		h := hierarchy{mount: unescapeMount(m.MountPoint), readOnly: ro}
		switch m.FSType {
		case "cgroup":
			// A v1 hierarchy names its controllers among its super
			// options (rw,memory).
			h.controllers = slices.Collect(maps.Keys(m.SuperOptions))
			v1 = append(v1, h)
		case "cgroup2":
			if v2 == nil {
				h.v2 = true
				b, _ := os.ReadFile(filepath.Join(h.mount, "cgroup.controllers"))
				h.controllers = strings.Fields(string(b))
				v2 = &h
			}
		}
	}
	var out []hierarchy
	add := func(h hierarchy, c string) {
		if i := slices.IndexFunc(out, func(o hierarchy) bool { return o.mount == h.mount }); i >= 0 {
			out[i].controllers = append(out[i].controllers, c)
			return
		}
		h.controllers = []string{c}
		out = append(out, h)
	}
	for _, c := range need {
		if i := slices.IndexFunc(v1, func(h hierarchy) bool { return slices.Contains(h.controllers, c) }); i >= 0 {
			add(v1[i], c)
		} else if v2 != nil && slices.Contains(v2.controllers, c) {
			add(*v2, c)
		} else {
			return nil, exitcode.Userf("confining the server needs the cgroup %s controller, and this host has it in neither a cgroup v1 mount nor the cgroup v2 root", c)
		}
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space),
// which procfs leaves in the mount points it reads.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (h hierarchy) dir(name string) string { return filepath.Join(h.mount, "dbrig", name) }

// Create makes the cgroups and sets their limits. A leftover from a
// server that crashed is removed first when empty, and reused otherwise.
func (g *Cgroup) Create() error {
	if err := g.Check(); err != nil {
		return err
	}
	for _, h := range g.hs {
		if err := h.create(g.name, g.conf); err != nil {
			return fmt.Errorf("cgroup %s: %w", h.dir(g.name), err)
		}
	}
	return nil
}

func (h hierarchy) create(name string, c Confinement) error {
	parent, dir := filepath.Dir(h.dir(name)), h.dir(name)
	_ = os.Remove(dir)
	if h.v2 {
		// Each level hands the controllers down to its children.
		enable := "+" + strings.Join(h.controllers, " +")
		if err := writeFile(filepath.Join(h.mount, "cgroup.subtree_control"), enable); err != nil {
			return err
		}
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), enable); err != nil {
			return err
		}
	} else if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, ctl := range h.controllers {
		var err error
		switch {
		case ctl == "memory" && h.v2:
			err = setMemoryV2(dir, c.Memory)
		case ctl == "memory":
			err = setMemoryV1(dir, c.Memory)
		case ctl == "cpuset" && h.v2:
			err = writeFile(filepath.Join(dir, "cpuset.cpus"), c.CPUs)
		case ctl == "cpuset":
			err = setCpusetV1(h.mount, parent, dir, c.CPUs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// setMemoryV1 limits memory and memory plus swap alike: swap is not more
// memory. memsw may never be below the memory limit, so a raise writes it
// first and a cut last.
func setMemoryV1(dir string, n int64) error {
	limit := filepath.Join(dir, "memory.limit_in_bytes")
	memsw := filepath.Join(dir, "memory.memsw.limit_in_bytes")
	v := strconv.FormatInt(n, 10)
	if _, err := os.Stat(memsw); err != nil {
		return writeFile(limit, v)
	}
	if err := writeFile(limit, v); err != nil {
		if err := writeFile(memsw, v); err != nil {
			return err
		}
		return writeFile(limit, v)
	}
	return writeFile(memsw, v)
}

func setMemoryV2(dir string, n int64) error {
	if err := writeFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(n, 10)); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err != nil {
		return nil // a kernel without swap accounting
	}
	return writeFile(filepath.Join(dir, "memory.swap.max"), "0")
}

// setCpusetV1: a new v1 cpuset starts with no CPUs and no memory nodes,
// and takes no process until it has both; the dbrig level gets the
// root's, the server's cgroup its CPUs and its parent's nodes.
func setCpusetV1(root, parent, dir, cpus string) error {
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		b, err := os.ReadFile(filepath.Join(parent, f))
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(b)) != "" {
			continue
		}
		if b, err = os.ReadFile(filepath.Join(root, f)); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(parent, f), strings.TrimSpace(string(b))); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(dir, "cpuset.cpus"), cpus); err != nil {
		return err
	}
	mems, err := os.ReadFile(filepath.Join(parent, "cpuset.mems"))
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "cpuset.mems"), strings.TrimSpace(string(mems)))
}

// writeFile writes one value the way a shell's echo does; the kernel
// answers a value it refuses in write's error.
func writeFile(path, value string) error {
	return os.WriteFile(path, []byte(value+"\n"), 0o644)
}

// Start starts cmd inside the cgroup, so that whatever it forks is born
// there: a server that daemonizes (pg_ctl starts the postmaster, which
// starts its workers) has forked before anyone could move it. cmd runs
// behind a shell that waits on a pipe until dbrig has written its PID to
// each cgroup.procs, then execs cmd in place. dbrig writes the PID rather
// than the child, which may run as another user: on v2 moving a process
// needs write access to the common ancestor's cgroup.procs, which only
// root has; v2's CLONE_INTO_CGROUP (SysProcAttr.CgroupFD) would spare the
// shell there, but v1 has nothing like it, and one way for both is
// simpler.
func (g *Cgroup) Start(cmd *exec.Cmd) error {
	if err := g.find(); err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer w.Close()
	fd := strconv.Itoa(3 + len(cmd.ExtraFiles))
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	cmd.Args = append([]string{"/bin/sh", "-c", `read _ <&` + fd + ` && exec "$@" ` + fd + `<&-`, "sh", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	err = cmd.Start()
	r.Close()
	if err != nil {
		return err
	}
	if err := g.enter(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	_, err = w.Write([]byte("go\n"))
	return err
}

// enter moves process pid (all its threads) into the cgroup.
func (g *Cgroup) enter(pid int) error {
	for _, h := range g.hs {
		if err := writeFile(filepath.Join(h.dir(g.name), "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("moving pid %d into cgroup %s: %w", pid, h.dir(g.name), err)
		}
	}
	return nil
}

// Remove deletes the cgroups once the server has stopped. Only an empty
// cgroup can be removed; the last process of a stopped server may take a
// moment to exit, so a busy one is tried again for a few seconds before
// it is left for the next Create to reuse.
func (g *Cgroup) Remove() error {
	if err := g.find(); err != nil {
		return err
	}
	var errs []error
	for _, h := range g.hs {
		dir := h.dir(g.name)
		deadline := time.Now().Add(5 * time.Second)
		for {
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dir, err))
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// Dir is the directory of the cgroup that holds controller ("memory",
// "cpuset"); "" when the confinement does not use it or the hierarchies
// cannot be read. The memory cgroup's usage file (memory.usage_in_bytes
// on v1, memory.current on v2) counts the server's memory with its page
// cache.
func (g *Cgroup) Dir(controller string) string {
	if g.find() != nil {
		return ""
	}
	for _, h := range g.hs {
		if slices.Contains(h.controllers, controller) {
			return h.dir(g.name)
		}
	}
	return ""
}
