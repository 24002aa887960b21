//go:build unix

package postgres

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOnlyTheOwnerGetsIn: another OS user reaches neither the socket nor
// 127.0.0.1, with or without the URL's password file; the owner's URL
// works; the password file is the owner's alone.
func TestOnlyTheOwnerGetsIn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("connecting as another OS user needs root")
	}
	s := newTestServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, s.URL(), "SELECT current_user"); got != ServerUser {
		t.Errorf("the owner's URL connects as %q", got)
	}
	if got := queryString(t, s.SocketURLFor("postgres"), "SELECT current_user"); got != ServerUser {
		t.Errorf("the owner's socket URL connects as %q", got)
	}
	fi, err := os.Stat(s.passPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file %s: %v, mode %v; want 0600", s.passPath(), err, fi.Mode().Perm())
	}
	b, err := os.ReadFile(s.passPath())
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(b))
	pw := line[strings.LastIndex(line, ":")+1:]
	if len(pw) < 20 {
		t.Fatalf("password file %q: want a generated password", s.passPath())
	}
	for _, u := range []string{s.URL(), s.SocketURLFor("postgres")} {
		if strings.Contains(u, pw) {
			t.Errorf("URL %s carries the password", u)
		}
	}

	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody to connect as")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	port := strconv.Itoa(s.Port())
	const noPassword, noSocket = "no password supplied", "Permission denied"
	for _, c := range []struct{ what, conninfo, want string }{
		{"loopback, the owner's URL", s.URL(), noPassword},
		{"loopback, no password file", "host=127.0.0.1 port=" + port + " user=" + ServerUser + " dbname=postgres sslmode=disable", noPassword},
		{"loopback, another role", "host=127.0.0.1 port=" + port + " user=postgres dbname=postgres sslmode=disable", noPassword},
		{"loopback, replication", "host=127.0.0.1 port=" + port + " user=" + ServerUser + " replication=database sslmode=disable", noPassword},
		{"socket, the owner's URL", s.SocketURLFor("postgres"), noSocket},
		{"socket, another role", "host=" + s.SocketDir() + " port=" + port + " user=postgres dbname=postgres", noSocket},
	} {
		cmd := exec.CommandContext(ctx, filepath.Join(s.Host.Bin, "psql"), "-w", "-X", "-At", "-c", "SELECT current_user", c.conninfo)
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: user nobody: %v: %s; want refused with %q", c.what, err, strings.TrimSpace(string(out)), c.want)
		}
	}
}
