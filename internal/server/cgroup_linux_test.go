package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// thisHost is the mountinfo of the machine dbrig is developed on: cgroup
// v1 with memory and cpuset in hierarchies of their own, and a cgroup2
// mount beside them.
const thisHost = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func useMountinfo(t *testing.T, text string) {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "self", "mountinfo"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	was := procRoot
	procRoot = root
	t.Cleanup(func() { procRoot = was })
}

func TestFindHierarchies(t *testing.T) {
	useMountinfo(t, thisHost)
	g := NewCgroup("/srv/pg one", Confinement{Memory: 1 << 30, CPUs: "0"})
	if err := g.find(); err != nil {
		t.Fatal(err)
	}
	want := []string{"/sys/fs/cgroup/memory/dbrig/pg_one-", "/sys/fs/cgroup/cpuset/dbrig/pg_one-"}
	for i, ctl := range []string{"memory", "cpuset"} {
		if d := g.Dir(ctl); !strings.HasPrefix(d, want[i]) || len(d) != len(want[i])+8 {
			t.Errorf("Dir(%s) = %s, want %s and 8 hex digits", ctl, d, want[i])
		}
	}
	if g.Dir("memory") != NewCgroup("/srv/pg one/", Confinement{Memory: 2 << 30}).Dir("memory") {
		t.Error("the same server directory gave two cgroup names")
	}
	if NewCgroup("/srv/pg one", Confinement{CPUs: "0"}).Dir("memory") != "" {
		t.Error("a confinement of CPUs only has a memory cgroup")
	}
}

func TestCheckRefuses(t *testing.T) {
	unified := t.TempDir()
	if err := os.WriteFile(filepath.Join(unified, "cgroup.controllers"), []byte("hugetlb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, mountinfo, want string }{
		{"no memory controller",
			"32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n41 31 0:38 / " + unified + " rw - cgroup2 cgroup2 rw\n",
			"confining the server needs the cgroup memory controller, and this host has it in neither a cgroup v1 mount nor the cgroup v2 root"},
		{"read-only mount",
			`35 31 0:32 / /sys/fs/cgroup/mem\040ory ro,nosuid - cgroup cgroup ro,memory` + "\n",
			"confining the server needs to write cgroups, and /sys/fs/cgroup/mem ory is mounted read-only (in a container, give it a writable cgroup mount)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			useMountinfo(t, c.mountinfo)
			err := NewCgroup("/srv/pg", Confinement{Memory: 1 << 30}).Check()
			var ue *exitcode.UserError
			if err == nil || err.Error() != c.want || !errors.As(err, &ue) {
				t.Errorf("Check() = %v, want the user error %q", err, c.want)
			}
		})
	}
}

// TestCgroupV2 runs the v2 way against a fixture tree: this host's cgroup2
// mount has no controllers to test it for real.
func TestCgroupV2(t *testing.T) {
	unified := t.TempDir()
	for name, text := range map[string]string{"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": "", "cgroup.procs": ""} {
		if err := os.WriteFile(filepath.Join(unified, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	useMountinfo(t, "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n41 31 0:38 / "+unified+" rw,nosuid - cgroup2 cgroup2 rw\n")
	g := NewCgroup("/srv/pg", Confinement{Memory: 256 << 20, CPUs: "0-1"})
	dir := g.Dir("memory")
	if dir != g.Dir("cpuset") || !strings.HasPrefix(dir, unified+"/dbrig/pg-") {
		t.Fatalf("memory cgroup %s, cpuset cgroup %s: want one, under %s/dbrig", dir, g.Dir("cpuset"), unified)
	}
	// A kernel that accounts swap has memory.swap.max, which a leftover
	// cgroup of an earlier start holds here.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("max\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.Create(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(unified, "cgroup.subtree_control"):          "+memory +cpuset",
		filepath.Join(unified, "dbrig", "cgroup.subtree_control"): "+memory +cpuset",
		filepath.Join(dir, "memory.max"):                          "268435456",
		filepath.Join(dir, "memory.swap.max"):                     "0",
		filepath.Join(dir, "cpuset.cpus"):                         "0-1",
	} {
		if got := readTrim(t, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	// The command reads cgroup.procs as it starts: its PID must be there
	// already, written before the gate let it run.
	procs := filepath.Join(dir, "cgroup.procs")
	cmd := exec.Command("/bin/sh", "-c", `echo $$; cat "$1"`, "sh", procs)
	out := &strings.Builder{}
	cmd.Stdout = out
	if err := g.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	if got := strings.Fields(out.String()); len(got) != 2 || got[0] != pid || got[1] != pid {
		t.Errorf("the command printed %q, want its PID %s twice (itself, then cgroup.procs)", out.String(), pid)
	}
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestCheckUnprivileged asks this host's real cgroups as a user who may
// not write them: root runs the test binary again as nobody.
func TestCheckUnprivileged(t *testing.T) {
	c := Confinement{Memory: 256 << 20, CPUs: "0"}
	if os.Getenv("DBRIG_CGROUP_CHILD") == "1" {
		fmt.Print(NewCgroup("/srv/pg", c).Check())
		os.Exit(0)
	}
	var out string
	switch {
	case os.Geteuid() != 0:
		out = fmt.Sprint(NewCgroup("/srv/pg", c).Check())
	case NewCgroup("/srv/pg", c).Check() != nil:
		t.Skip("this host has no writable cgroups even for root, so there is nothing to refuse to others")
	default:
		out = runAsNobody(t)
	}
	t.Log(out)
	if strings.Contains(out, "\n") || !strings.Contains(out, "is not writable by this user") || !strings.HasSuffix(out, "run dbrig as root") {
		t.Errorf("Check as a user who may not write cgroups: %q, want one line saying so", out)
	}
}

func runAsNobody(t *testing.T) string {
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody to run as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	// The test binary lives in a directory only root may enter.
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "server.test")
	if err := copyExecutable(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestCheckUnprivileged$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DBRIG_CGROUP_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running the check as nobody: %v: %s", err, out)
	}
	return string(out)
}

func copyExecutable(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
