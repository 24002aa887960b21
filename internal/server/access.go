//go:build unix

package server

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// Unprivileged is the credential to run a server as when dbrig runs as
// root: the user name if given, else preferred (the user the database's
// packages make, such as "postgres" or "mysql") if it exists, else
// "nobody". program names the server in messages.
func Unprivileged(name, preferred, program string) (*syscall.Credential, string, error) {
	var u *user.User
	var err error
	if name != "" {
		u, err = user.Lookup(name)
	} else if u, err = user.Lookup(preferred); err != nil {
		u, err = user.Lookup("nobody")
	}
	if err != nil {
		return nil, "", fmt.Errorf("running as root, and no user to run %s as: %w", program, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, "", fmt.Errorf("user %s: uid %q: %w", u.Username, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, "", fmt.Errorf("user %s: gid %q: %w", u.Username, u.Gid, err)
	}
	if uid == 0 {
		return nil, "", fmt.Errorf("user %s is root; %s refuses to run as root", u.Username, program)
	}
	// An empty Groups drops root's supplementary groups too.
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, u.Username, nil
}

// CheckReachable lets the user cred (named runAs, running program) walk
// down to dir, or says why it cannot. Temporary directories such as
// t.TempDir()'s are made 0700 by whoever created them, so with fix set it
// makes dir 0755 and adds search permission (o+x, never read) to its
// ancestors inside os.TempDir(); any other ancestor that blocks the user
// is reported as an error instead of being changed. With fix unset it
// only checks the ancestors that exist. A nil cred can go anywhere.
func CheckReachable(dir string, cred *syscall.Credential, runAs, program string, fix bool) error {
	if cred == nil {
		return nil
	}
	if fix {
		if err := os.Chmod(dir, 0o755); err != nil {
			return err
		}
	}
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil && (fix || !errors.Is(err, os.ErrNotExist)) {
			return err
		}
		if err == nil && !canSearch(fi, cred) {
			real, err := filepath.EvalSymlinks(d)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(tmp, real)
			if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
				return exitcode.Userf("%s runs as user %s, which cannot enter %s (mode %04o): "+
					"put the server directory elsewhere or grant search permission",
					program, runAs, d, fi.Mode().Perm())
			}
			if fix {
				if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
					return err
				}
			}
		}
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}

// canSearch reads the mode bits only; ACLs are rare on the directories
// this is meant for.
func canSearch(fi os.FileInfo, cred *syscall.Credential) bool {
	perm := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return perm&0o001 != 0
	}
	switch {
	case st.Uid == cred.Uid:
		return perm&0o100 != 0
	case st.Gid == cred.Gid:
		return perm&0o010 != 0
	}
	return perm&0o001 != 0
}

// Own makes path belong to cred's user, when there is one.
func Own(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return os.Lchown(path, int(cred.Uid), int(cred.Gid))
}
