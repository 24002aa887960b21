//go:build unix

package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// MaxSocketPath keeps a unix socket's path under the 107 bytes sun_path
// allows, with room to spare.
const MaxSocketPath = 100

// unsafeSocketDir: a socket directory reaches the server through option
// lists and shells, so one is only used when its path is plain.
var unsafeSocketDir = regexp.MustCompile(`[^A-Za-z0-9/._+-]`)

// MakeSocketDir makes the directory for a server's unix socket, whose
// longest name is file: dir/sock when the path is short and plain enough,
// else a temporary directory (temp set) that the server's Stop removes.
// It belongs to cred's user, who creates the socket.
func MakeSocketDir(dir, file string, cred *syscall.Credential) (sockDir string, temp bool, err error) {
	sockDir = filepath.Join(dir, "sock")
	// The socket's directory is the server's user's alone: nobody else
	// reaches the socket (root does, as ever).
	if len(sockDir)+1+len(file) < MaxSocketPath && !unsafeSocketDir.MatchString(sockDir) {
		if err := os.MkdirAll(sockDir, 0o700); err != nil {
			return "", false, err
		}
		if err := os.Chmod(sockDir, 0o700); err != nil {
			return "", false, err
		}
		return sockDir, false, Own(sockDir, cred)
	}
	parent := os.TempDir()
	if len(parent) > 40 || unsafeSocketDir.MatchString(parent) {
		parent = "/tmp"
	}
	if sockDir, err = os.MkdirTemp(parent, tempSocketDir); err != nil { // mode 0700
		return "", false, err
	}
	return sockDir, true, Own(sockDir, cred)
}

// tempSocketDir begins the name of a socket directory that MakeSocketDir
// made outside the server's directory.
const tempSocketDir = "dbrig-sock-"

// isTempSocketDir tells a socket directory that MakeSocketDir made
// outside the server's directory dir, which the server's Stop removes.
func isTempSocketDir(dir, sockDir string) bool {
	return sockDir != filepath.Join(dir, "sock") && strings.HasPrefix(filepath.Base(sockDir), tempSocketDir)
}
