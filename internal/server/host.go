//go:build unix

package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// What every kind of managed server needs from this host, whatever the
// database, is here and beside it: a user to run as when dbrig is root
// (servers refuse root) and a directory that user can reach (access.go),
// a socket directory (socket.go), a free loopback port and the live state
// (live.go), the server's log read back in pieces (logtail.go), the
// processes' state in /proc (proc.go), and why a server died (crash.go).

// Host is how a managed server runs on this host, resolved once from its
// kind's options: its directory made absolute, its binaries found, and,
// when dbrig runs as root, the unprivileged user the server runs as.
type Host struct {
	Bin  string              // the binaries' directory, absolute
	Cred *syscall.Credential // nil: the server runs as dbrig's own user
	User string              // the name behind Cred, for messages
	done bool
}

// Resolve fills h once. dir is made absolute in place (commands run with
// it as their working directory, so a relative path would point
// elsewhere); find looks for the binaries from the hint binDir; preferred
// is the user the database's packages make, and program names the server
// in messages.
func (h *Host) Resolve(dir *string, binDir, runAs string, find func(string) (string, error), preferred, program string) error {
	if h.done {
		return nil
	}
	if *dir == "" {
		return fmt.Errorf("%s server: Dir is not set", program)
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	*dir = abs
	bin, err := find(binDir)
	if err != nil {
		return err
	}
	if h.Bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		if h.Cred, h.User, err = Unprivileged(runAs, preferred, program); err != nil {
			return err
		}
	}
	h.done = true
	return nil
}

// MakeDataDir makes dir, reachable by the server's user, and the empty
// data directory in it that the server's user owns, for an init command
// that wants one. A dir the user cannot reach fails before anything is
// made.
func (h *Host) MakeDataDir(dir, data, program string) error {
	if err := CheckReachable(dir, h.Cred, h.User, program, false); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := CheckReachable(dir, h.Cred, h.User, program, true); err != nil {
		return err
	}
	if err := os.Mkdir(data, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return Own(data, h.Cred)
}

// MakeLog readies a start: the server's user can reach dir again (a
// start may follow an Init by another process), and the server's log,
// which every start appends to, belongs to it. It returns where this
// start's lines will begin in the log.
func (h *Host) MakeLog(dir, path, program string) (int64, error) {
	if err := CheckReachable(dir, h.Cred, h.User, program, true); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	f.Close()
	return FileSize(path), Own(path, h.Cred)
}

// Started is the state file's record of a start that succeeded.
func (h *Host) Started(kind string, port int, socket string, settings map[string]string, logOffset int64, c Confinement) *Record {
	return &Record{
		Kind:      kind,
		BinDir:    h.Bin,
		RunAs:     h.User,
		Port:      port,
		SocketDir: socket,
		Settings:  settings,
		Started:   time.Now().UTC().Truncate(time.Second),
		LogOffset: logOffset,
		Memory:    c.Memory,
		CPUs:      c.CPUs,
		Running:   true,
	}
}

// SavedStatus is what a server's Status says before looking whether the
// server runs: stopped, with the binaries' version, and what the state
// file in dir recorded of the last start (nil when there is none).
// settings, when not empty, are those the calling process started it with.
func (h *Host) SavedStatus(dir, version, logPath string, settings map[string]string) (Status, *Record, error) {
	st := Status{State: Stopped, Version: version, BinDir: h.Bin, LogPath: logPath, Settings: settings}
	saved, err := ReadState(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return st, nil, nil
		}
		return st, nil, err
	}
	st.Started, st.PID = saved.Started, saved.PID
	if len(st.Settings) == 0 {
		st.Settings = saved.Settings
	}
	st.Confinement = saved.Confinement()
	return st, saved, nil
}

// Locked resolves h under mu, the server's lock, and returns the
// binaries' directory, for the methods that read them outside a start.
func (h *Host) Locked(mu *sync.Mutex, resolve func() error) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if err := resolve(); err != nil {
		return "", err
	}
	return h.Bin, nil
}

// Command builds a command for one of the server's binaries (path), run
// in dir as the server's user. Environment variables that start with one
// of clientEnv's prefixes are meant for the database's clients and must
// not steer the server; everything it needs is on its command line.
func (h *Host) Command(ctx context.Context, dir string, clientEnv []string, path string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	// The caller's working directory may be unreachable for the server's
	// user, and some commands complain about that.
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(clientEnv, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: h.Cred}
	// A server the command starts writes to its log, not our pipes; this
	// only bounds the wait if a stray child ever keeps them open.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// WriteOwned writes a file that only the server's user can read.
func (h *Host) WriteOwned(path string, body []byte) error {
	if err := os.WriteFile(path, body, 0o600); err != nil {
		return err
	}
	return Own(path, h.Cred)
}

// BinOutput is what the server's binary name in bin prints given args,
// run as dbrig's own user in the C locale: for what the binaries say
// without a server or a data directory (their version, their settings),
// which root may ask too. A failure names the command.
func BinOutput(ctx context.Context, bin, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s in %s: %w", strings.Join(append([]string{name}, args...), " "), bin, err)
	}
	return out, nil
}
