//go:build linux

package postgres

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/servertest"
	"github.com/jackc/pgx/v5"
)

func TestConfinedServer(t *testing.T) {
	c := server.Confinement{Memory: 256 << 20, CPUs: "0"}
	servertest.RequireCgroups(t, c)
	s := newTestServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Confine(c); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// A connection adds a backend, forked after the start.
	conn, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Confinement != c {
		t.Errorf("status confinement %+v, want %+v", st.Confinement, c)
	}
	g := server.NewCgroup(s.Dir, c)
	memDir, cpuDir := g.Dir("memory"), g.Dir("cpuset")
	if st.MemoryCgroup != memDir || memDir == "" || cpuDir == "" {
		t.Fatalf("status memory cgroup %q; cgroups memory %q, cpuset %q", st.MemoryCgroup, memDir, cpuDir)
	}
	if got := readFirst(t, filepath.Join(memDir, "memory.limit_in_bytes"), filepath.Join(memDir, "memory.max")); got != "268435456" {
		t.Errorf("memory limit %s, want 268435456", got)
	}
	if got := readFirst(t, filepath.Join(cpuDir, "cpuset.cpus")); got != "0" {
		t.Errorf("cpuset.cpus %q, want 0", got)
	}

	want := "/dbrig/" + filepath.Base(memDir)
	tree := servertest.Descendants(t, st.PID)
	if len(tree) < 5 { // postmaster, checkpointer, bgwriter, walwriter, our backend...
		t.Fatalf("postmaster %d has only %v in its tree", st.PID, tree)
	}
	for _, pid := range tree {
		if bad := outside(t, pid, want); bad != "" {
			t.Errorf("pid %d is not in %s: %s", pid, want, bad)
		}
	}

	conn.Close(ctx)
	// A crashed server's cgroup, or one that a dbrig killed outright left
	// behind, does not stand in the way of the next start.
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); !errors.Is(err, server.ErrCrashed) {
		t.Fatalf("Stop after the postmaster was killed: %v, want it to say the server had crashed", err)
	}
	for _, dir := range []string{memDir, cpuDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx, nil); err != nil {
		t.Fatalf("Start after a crash: %v", err)
	}
	if got := readFirst(t, filepath.Join(memDir, "memory.limit_in_bytes"), filepath.Join(memDir, "memory.max")); got != "268435456" {
		t.Errorf("memory limit after the restart %s, want 268435456", got)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	assertGone(t, memDir, cpuDir)
	// A start that fails leaves no cgroup behind.
	if err := s.Start(ctx, map[string]string{"shared_buffers": "lots"}); err == nil {
		t.Fatal("a start with shared_buffers=lots succeeded")
	}
	assertGone(t, memDir, cpuDir)
}

func assertGone(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cgroup %s still there after stop (%v)", dir, err)
		}
	}
}

// readFirst reads the first of paths that exists: the file names differ
// between cgroup v1 and v2.
func readFirst(t *testing.T, paths ...string) string {
	t.Helper()
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	t.Fatalf("none of %v exists", paths)
	return ""
}

// outside returns the line of /proc/PID/cgroup that puts pid's memory or
// cpuset outside want, "" when both are in it. On v2 the one unified line
// holds both.
func outside(t *testing.T, pid int, want string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, ctl := range []string{"memory", "cpuset"} {
			if f[1] != "" && !strings.Contains(","+f[1]+",", ","+ctl+",") {
				continue
			}
			if f[1] == "" && found[ctl] {
				continue
			}
			if f[2] != want {
				return line
			}
			found[ctl] = true
		}
	}
	if !found["memory"] || !found["cpuset"] {
		return "no memory or cpuset line in " + string(b)
	}
	return ""
}
