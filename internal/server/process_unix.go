//go:build unix

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// What every kind of managed server needs from this host, whatever the
// database: a user to run as when dbrig is root (servers refuse root), a
// directory that user can reach, a free loopback port, and the server's
// log read back in pieces.

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

// FreeLoopbackPort is a TCP port on 127.0.0.1 that nothing listens on
// now. Another process may take it before the server binds it; a start
// that finds it in use tries another.
func FreeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FileSize is path's size, 0 when it cannot be read.
func FileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// ReadFrom reads what a server logged since offset, capped so a chatty
// failure cannot flood an error.
func ReadFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxTail = 64 << 10
	if size := FileSize(path); size-offset > maxTail {
		offset = size - maxTail
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// LastLines joins the last n non-blank lines of s into one line.
func LastLines(s string, n int) string { return HeadTail(s, 0, n) }

// HeadTail joins the first head and the last tail non-blank lines of s
// into one line, with "..." where lines were left out: a setup command
// says what it was doing first and why it gave up last, and its cause can
// be at either end.
func HeadTail(s string, head, tail int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > head+tail {
		lines = append(lines[:head:head], append([]string{"..."}, lines[len(lines)-tail:]...)...)
		if head == 0 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "; ")
}

// IsZombie reports whether pid has exited and waits to be reaped: where
// PID 1 is slow to reap orphans (some containers and VMs), a killed
// server lingers as a zombie that looks alive to a signal 0.
func IsZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

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
	if sockDir, err = os.MkdirTemp(parent, "dbrig-sock-"); err != nil { // mode 0700
		return "", false, err
	}
	return sockDir, true, Own(sockDir, cred)
}

// HugePagesTotal reads HugePages_Total from a /proc/meminfo text; -1 when
// it cannot tell, so that only a known zero stops a sweep.
func HugePagesTotal(meminfo string) int {
	for _, line := range strings.Split(meminfo, "\n") {
		if v, ok := strings.CutPrefix(line, "HugePages_Total:"); ok {
			var n int
			if _, err := fmt.Sscan(strings.TrimSpace(v), &n); err == nil {
				return n
			}
		}
	}
	return -1
}

// ReadMeminfo is /proc/meminfo's text, "" where there is none.
func ReadMeminfo() string {
	b, _ := os.ReadFile("/proc/meminfo")
	return string(b)
}

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

// CrashReason says how the server process name (pid, when known) died,
// from the lines of its log that match (once prefix, the date and such,
// is taken off each): the last of them, repeats dropped (clients cut off
// by a crash repeat the same message), or that it was killed from
// outside when the log says nothing.
func CrashReason(log string, prefix, match *regexp.Regexp, name string, pid int) string {
	var keep []string
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(prefix.ReplaceAllString(line, ""))
		if line == "" || !match.MatchString(line) {
			continue
		}
		line = strings.Join(strings.Fields(line), " ")
		if n := len(keep); n > 0 && keep[n-1] == line {
			continue
		}
		keep = append(keep, line)
	}
	who := name
	if pid > 0 {
		who = fmt.Sprintf("%s (pid %d)", name, pid)
	}
	if len(keep) == 0 {
		return who + " is gone without a clean shutdown, and the log says nothing about it: it was killed from outside (SIGKILL, the OOM killer, a reboot)"
	}
	if len(keep) > 6 {
		keep = keep[len(keep)-6:]
	}
	return who + " is gone without a clean shutdown; the log says: " + strings.Join(keep, "; ")
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

// Live is where a managed server that this process started, or found
// running, listens. It has its own lock, so that Running, Port and the
// URLs can be read while a Start or Stop holds the server's.
type Live struct {
	mu      sync.Mutex
	running bool
	port    int
	// last is the port of the server's last life, which its next start
	// takes again where it can (see launch).
	last    int
	socket  string // as the kind's URLs name it: its directory, or the socket itself
	tempDir string // a socket directory made outside the server's directory
}

// Listen records the socket a start is about to use, in directory dir;
// temp says MakeSocketDir made dir outside the server's directory, for
// Down to remove.
func (l *Live) Listen(socket, dir string, temp bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.socket, l.tempDir = socket, ""
	if temp {
		l.tempDir = dir
	}
}

// Up records that the server runs, on port.
func (l *Live) Up(port int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running, l.port = true, port
}

// Down records that the server is not running, and removes a temporary
// socket directory.
func (l *Live) Down() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.port != 0 {
		l.last = l.port
	}
	l.running, l.port = false, 0
	if l.tempDir != "" {
		os.RemoveAll(l.tempDir)
		l.socket, l.tempDir = "", ""
	}
}

// Running reports whether the server was started or found running, and
// not stopped since.
func (l *Live) Running() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

// Port is the running server's loopback TCP port, 0 when stopped.
func (l *Live) Port() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.port
}

// Socket is the running server's socket, as Listen recorded it.
func (l *Live) Socket() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.socket
}

// Launch is the end of every kind's Start, once its own checks are done
// and the socket is chosen: start runs the server on the loopback port of
// its last life in this process, else on a free one, and again on another
// while it fails because the port was taken (inUse;
// a free port can be taken between choosing it and the server binding
// it), at most five times; record then writes the state file. When either
// fails, kill stops a server that came up (without the state file another
// process could not find it, and this one would leave it running unseen),
// and the socket directory and the cgroup go.
func Launch(ctx context.Context, live *Live, c *Confined,
	start func(port int) (inUse bool, err error), record func() error, kill func()) error {
	err := launch(ctx, live, start)
	if err == nil {
		if err = record(); err != nil {
			kill()
		}
	}
	if err != nil {
		live.Down()
		_ = c.Remove() // the start's error is the news; a busy cgroup is reused
	}
	return err
}

func launch(ctx context.Context, live *Live, start func(port int) (bool, error)) error {
	var err error
	// A server restarted by this process comes back where its clients
	// knew it, so that they reconnect to it as they would after a crash
	// that a service manager restarted; a free port is the fallback.
	live.mu.Lock()
	port := live.last
	live.mu.Unlock()
	for range 5 {
		if port == 0 {
			var perr error
			if port, perr = FreeLoopbackPort(); perr != nil {
				return perr
			}
		}
		var inUse bool
		if inUse, err = start(port); err == nil {
			live.Up(port)
			return nil
		}
		if !inUse || ctx.Err() != nil {
			return err
		}
		port = 0
	}
	return err
}

// SettingOrder is the names of settings in a start's order (sorted), after
// refusing any that owned says the server's Start sets itself: one that
// changed where the server listens or writes would put it out of reach.
func SettingOrder(settings map[string]string, owned func(name string) bool) ([]string, error) {
	names := make([]string, 0, len(settings))
	for name := range settings {
		if owned(name) {
			return nil, exitcode.Userf("setting %s is managed by dbrig's server and cannot be overridden", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// AckCrash is a Stop of a server this process does not run: a crash that
// the state file in dir still records, the server being gone, is
// acknowledged, so that status stops reporting it, and the cgroup the
// server ran in is removed. alive looks whether the server runs.
func AckCrash(dir string, alive func() (bool, error), c *Confined) error {
	st, err := ReadState(dir)
	if err != nil || !st.Running {
		return nil
	}
	up, err := alive()
	if err != nil || up {
		return err
	}
	return errors.Join(WriteStopped(dir), c.Remove())
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
