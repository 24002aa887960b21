//go:build linux

package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestIsZombie: a child that has exited and is not yet waited for is a
// zombie; a running one and a reaped one are not.
func TestIsZombie(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if IsZombie(pid) {
		t.Error("a running process is a zombie")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !IsZombie(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !IsZombie(pid) {
		t.Error("a killed child not yet waited for is not a zombie")
	}
	cmd.Wait()
	if IsZombie(pid) {
		t.Error("a reaped process is still a zombie")
	}
}

func TestHugePages(t *testing.T) {
	for _, c := range []struct {
		meminfo string
		want    int
	}{
		{"MemTotal:       24576000 kB\nHugePages_Total:    1200\nHugePages_Free:        0\n", 1200},
		{"MemTotal:       24576000 kB\nHugePages_Total:       0\n", 0},
		{"MemTotal:       24576000 kB\n", -1},
		{"", -1},
	} {
		root := t.TempDir()
		if c.meminfo != "" {
			if err := os.WriteFile(filepath.Join(root, "meminfo"), []byte(c.meminfo), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := hugePagesIn(root); got != c.want {
			t.Errorf("meminfo %q: %d huge pages, want %d", c.meminfo, got, c.want)
		}
	}
}
