//go:build linux

package servertest

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size bytes for the test and returns its
// directory, writable by anyone (a server's unprivileged user too), so
// that a test can fill it and see what a full disk does. It is unmounted
// when the test ends. Mounting needs root: elsewhere the test is skipped,
// unless DBRIG_REQUIRE_MOUNT=1 (CI runs as root) makes that a failure.
func SmallDisk(t testing.TB, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small-disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := "size=" + strconv.FormatInt(size, 10) + ",mode=1777"
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		if os.Getenv("DBRIG_REQUIRE_MOUNT") == "1" {
			t.Fatalf("DBRIG_REQUIRE_MOUNT=1 but mounting a tmpfs failed: %v", err)
		}
		t.Skipf("mounting a tmpfs: %v (needs root; set DBRIG_REQUIRE_MOUNT=1 to fail instead)", err)
	}
	// The temporary directory's own cleanup, registered first, runs
	// after this one, once nothing is mounted on it.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	// t.TempDir's parents are 0700 under root: the server's user must
	// reach the mount through them.
	for d := filepath.Dir(dir); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
