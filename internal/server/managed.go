//go:build unix

package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// Managed is the part of a managed server that every kind has alike, and
// that a kind's Server embeds: where it lives and what it runs (Dir,
// BinDir and RunAs, resolved once into Host), what it was started with and
// confined to, where it listens (Live), and, around the kind's own
// commands, Init, Start, Stop, Status, Attach, the state file and crash
// reasons. A kind's New hands it, with Bind, its Traits and its Hooks: what
// it does its own way.
type Managed struct {
	// Dir holds everything the server writes. Required.
	Dir string
	// BinDir holds the server's binaries; Traits.FindBin looks for them
	// when it is empty.
	BinDir string
	// RunAs names the OS user the server runs as when dbrig runs as root.
	// Ignored otherwise: without root there is no one else to become.
	RunAs string

	// Host, Live and Confined are for the kind's Hooks.
	Host     Host
	Live     Live
	Confined Confined

	mu       sync.Mutex
	settings map[string]string // what the running server was started with
	t        *Traits
	own      Hooks
}

// Traits are what a kind says of itself, once.
type Traits struct {
	// Kind is the name the kind registers; Title names its database in
	// messages, and Program the server's binary.
	Kind, Title, Program string
	// User is the OS user the database's packages make, which a server
	// started by root runs as where it exists (else "nobody").
	User string
	// FindBin finds the binaries' directory, from BinDir when set.
	FindBin func(hint string) (string, error)
	// Version names the version of the binaries in bin, as a person would.
	Version func(ctx context.Context, bin string) (string, error)
	// Known lists the names of the settings the binaries in bin take, and
	// CheckNames refuses, in one line, a name among names that the server
	// would not take, given those.
	Known      func(ctx context.Context, bin string) ([]string, error)
	CheckNames func(names, known []string) error
	// ClientEnv are the prefixes of environment variables meant for the
	// database's clients, which must not steer the server's commands.
	ClientEnv []string
	// SocketFile is the longest name the server gives its socket in the
	// socket's directory; NamesSocket says that the kind's URLs name the
	// socket itself rather than its directory.
	SocketFile  string
	NamesSocket bool
	// LogPrefix matches what the server's log writes before each message
	// (the date and such), CrashLines the messages that tell how a server
	// died, and Main names the server's main process in a crash reason.
	LogPrefix, CrashLines *regexp.Regexp
	Main                  string
	// StartHint is the command that starts a server in a directory, for
	// an Attach that finds none there.
	StartHint string
}

// Hooks are what a kind's Server does its own way. Managed calls them
// once Host is resolved, and with its lock held but for Exists, Find and
// URLsAt, which Status and Attach call without it.
type Hooks interface {
	// Exists reports whether Init made the server's data in Dir.
	Exists() bool
	// Create makes the server's data in the empty DataDir, with password
	// for the account dbrig uses, kept where the kind's URLs find it.
	Create(ctx context.Context, password string) error
	// Prepare readies a start with settings (refusing a server of the
	// kind left running in Dir) and returns the settings the server runs
	// with: the kind's defaults added.
	Prepare(ctx context.Context, settings map[string]string) (map[string]string, error)
	// Owned tells that the kind's start sets the setting name itself.
	Owned(name string) bool
	// Launch runs the server on port, with settings given in the order of
	// names, until it accepts connections; inUse says the port was taken.
	Launch(ctx context.Context, port int, names []string, settings map[string]string) (inUse bool, err error)
	// Kill ends a server that Launch started and the start cannot keep.
	Kill()
	// Find tells whether the server in Dir runs, whichever process
	// started it, and where it listens, from itself or from saved (the
	// state file's record, nil when there is none).
	Find(ctx context.Context, saved *Record) (Listening, bool, error)
	// Halt shuts the running server down cleanly. gone says that it is
	// not running any more even when err is not nil (found dead, say).
	Halt(ctx context.Context) (gone bool, err error)
	// URLsAt are the URLs of the server's administrative database when it
	// listens at port and socket: over TCP, and through the socket.
	URLsAt(port int, socket string) (tcp, unix string)
}

// Listening is where a running server was found.
type Listening struct {
	PID  int
	Port int
	// Socket is as Live.Socket names it.
	Socket string
}

// Bind sets the kind's own parts; a kind's New calls it once.
func (m *Managed) Bind(dir, binDir string, t *Traits, own Hooks) {
	m.Dir, m.BinDir, m.t, m.own = dir, binDir, t, own
}

// DataDir is where the server keeps its data.
func (m *Managed) DataDir() string { return filepath.Join(m.Dir, "data") }

// LogPath is the server's log; every start appends to it, so it keeps the
// server's history across restarts, and a failed start quotes its lines.
func (m *Managed) LogPath() string { return filepath.Join(m.Dir, "server.log") }

// resolve finds the binaries and the user to run as, once.
func (m *Managed) resolve() error {
	return m.Host.Resolve(&m.Dir, m.BinDir, m.RunAs, m.t.FindBin, m.t.User, m.t.Program)
}

// Bin is the binaries' directory, for the methods that read them outside
// a start.
func (m *Managed) Bin() (string, error) { return m.Host.Locked(&m.mu, m.resolve) }

// Version names the version of the binaries this server runs.
func (m *Managed) Version(ctx context.Context) (string, error) {
	bin, err := m.Bin()
	if err != nil {
		return "", err
	}
	return m.t.Version(ctx, bin)
}

// CheckSettingNames refuses, in one line, names the server's binaries do
// not know (a typo in a spec), without starting anything.
func (m *Managed) CheckSettingNames(ctx context.Context, names []string) error {
	bin, err := m.Bin()
	if err != nil {
		return err
	}
	known, err := m.t.Known(ctx, bin)
	if err != nil {
		return err
	}
	return m.t.CheckNames(names, known)
}

// Command builds a command for the server's binary name (a path, or a
// name in the binaries' directory), run in Dir as the server's user.
func (m *Managed) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if !filepath.IsAbs(name) {
		name = filepath.Join(m.Host.Bin, name)
	}
	return m.Host.Command(ctx, m.Dir, m.t.ClientEnv, name, args...)
}

// Init creates the server's data in DataDir, and a password for dbrig's
// account. It does nothing when the data is there, so a sweep can Init
// once and Start many times.
func (m *Managed) Init(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.resolve(); err != nil {
		return err
	}
	if m.own.Exists() {
		return nil
	}
	// The kind's init command wants an empty directory that the server's
	// user owns; making it here lets Dir stay dbrig's.
	if err := m.Host.MakeDataDir(m.Dir, m.DataDir(), m.t.Program); err != nil {
		return err
	}
	pw, err := NewPassword()
	if err != nil {
		return err
	}
	return m.own.Create(ctx, pw)
}

// NewPassword is a server's password: 144 random bits, in characters that
// need no quoting in a password file, SQL or a URL.
func NewPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Start starts the server with settings, for this start only, and returns
// once it accepts connections. A setting the server rejects is a
// exitcode.UserError in the server's own words.
func (m *Managed) Start(ctx context.Context, settings map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Live.Running() {
		return fmt.Errorf("%s server in %s is already running", m.t.Kind, m.Dir)
	}
	if err := m.resolve(); err != nil {
		return err
	}
	if !m.own.Exists() {
		return fmt.Errorf("no %s server in %s: call Init first", m.t.Title, m.Dir)
	}
	settings, err := m.own.Prepare(ctx, settings)
	if err != nil {
		return err
	}
	// A crash nobody acknowledged is superseded by this start: what the
	// log says from now on is not the crashed server's doing.
	if err := WriteStopped(m.Dir); err != nil {
		return err
	}
	names, err := SettingOrder(settings, m.own.Owned)
	if err != nil {
		return err
	}
	logStart, err := m.Host.MakeLog(m.Dir, m.LogPath(), m.t.Program)
	if err != nil {
		return err
	}
	if err := m.makeSocketDir(); err != nil {
		return err
	}
	if err := m.Confined.Create(); err != nil {
		return err
	}
	return Launch(ctx, &m.Live, &m.Confined, func(port int) (bool, error) {
		return m.own.Launch(ctx, port, names, settings)
	}, func() error {
		m.settings = maps.Clone(settings)
		return m.writeStarted(ctx, logStart)
	}, m.own.Kill)
}

func (m *Managed) makeSocketDir() error {
	dir, temp, err := MakeSocketDir(m.Dir, m.t.SocketFile, m.Host.Cred)
	if err != nil {
		return err
	}
	socket := dir
	if m.t.NamesSocket {
		socket = filepath.Join(dir, m.t.SocketFile)
	}
	m.Live.Listen(socket, dir, temp)
	return nil
}

func (m *Managed) writeStarted(ctx context.Context, logOffset int64) error {
	st := m.Host.Started(m.t.Kind, m.Live.Port(), m.Live.Socket(), m.settings, logOffset, m.Confined.Get())
	if v, err := m.t.Version(ctx, m.Host.Bin); err == nil {
		st.Version = v
	}
	if l, ok, _ := m.own.Find(ctx, st); ok {
		st.PID = l.PID
	}
	return WriteState(m.Dir, st)
}

// Stop shuts the server down cleanly; stopping a server that is not
// running does nothing, but for acknowledging its crash. A server found
// dead returns an error wrapping ErrCrashed.
func (m *Managed) Stop(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.Live.Running() {
		return m.ackCrash(ctx)
	}
	gone, err := m.own.Halt(ctx)
	if err != nil {
		if gone {
			m.Live.Down()
			_ = m.Confined.Remove() // the crash is the news; a busy cgroup is reused
		}
		return err
	}
	m.Live.Down()
	return errors.Join(WriteStopped(m.Dir), m.Confined.Remove())
}

// Forget records that the server is gone, killed on purpose (a node
// lost at a failover): nothing to stop, and no crash to report.
func (m *Managed) Forget() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Live.Down()
	return errors.Join(WriteStopped(m.Dir), m.Confined.Remove())
}

// ackCrash is a Stop of a server this process does not run: a crash that
// the state file still records, the server being gone, is acknowledged,
// so that Status stops reporting it, and the server's cgroup is removed.
func (m *Managed) ackCrash(ctx context.Context) error {
	st, err := ReadState(m.Dir)
	if err != nil || !st.Running {
		return nil
	}
	if err := m.resolve(); err != nil {
		return err
	}
	if _, up, err := m.own.Find(ctx, st); err != nil || up {
		return err
	}
	return errors.Join(WriteStopped(m.Dir), m.Confined.Remove())
}

// Running reports whether Start succeeded and Stop has not yet run.
func (m *Managed) Running() bool { return m.Live.Running() }

// Port is the loopback TCP port of the running server, 0 when stopped.
func (m *Managed) Port() int { return m.Live.Port() }

// Settings returns the settings the running server was started with (for
// an attached one, what the state file recorded).
func (m *Managed) Settings() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.settings)
}

// Confine sets the confinement of the starts that follow: the server's
// first process is then started inside the server's cgroup, so every
// process it forks is born there.
func (m *Managed) Confine(c Confinement) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Confined.Confine(m.Dir, m.Live.Running(), c)
}

// Attach readies a server its kind's New made for a Dir that holds one,
// as another process left it, running or not: with the binaries, user,
// settings and confinement it was started with, so that it can be
// stopped or inspected (see Server.Attach).
func (m *Managed) Attach() error {
	dir := m.Dir
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	m.Dir = abs
	if !m.own.Exists() {
		return exitcode.Userf("no dbrig %s server in %s: start one with %s %s", m.t.Title, abs, m.t.StartHint, dir)
	}
	st, err := ReadState(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		m.BinDir, m.RunAs, m.settings = st.BinDir, st.RunAs, st.Settings
		m.Confined.Set(abs, st.Confinement())
	}
	if _, err := m.Bin(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, up, err := m.own.Find(ctx, st)
	if err != nil || !up {
		return err
	}
	// A start made a socket directory outside Dir when Dir's path was too
	// long; Stop removes it, as it would have in the starting process.
	sockDir := l.Socket
	if m.t.NamesSocket {
		sockDir = filepath.Dir(sockDir)
	}
	m.Live.Listen(l.Socket, sockDir, isTempSocketDir(abs, sockDir))
	m.Live.Up(l.Port)
	return nil
}

// Status reports whether the server runs, and if dbrig started it and it
// is gone without a stop, that it crashed and what its log says. Status
// carries the crash until a Stop acknowledges it or a Start supersedes it.
func (m *Managed) Status(ctx context.Context) (Status, error) {
	bin, err := m.Bin()
	if err != nil {
		return Status{}, err
	}
	version := ""
	if v, err := m.t.Version(ctx, bin); err == nil {
		version = v
	}
	st, saved, err := m.Host.SavedStatus(m.Dir, version, m.LogPath(), m.Settings())
	if err != nil {
		return st, err
	}
	l, up, err := m.own.Find(ctx, saved)
	if err != nil {
		return st, err
	}
	if up {
		st.State, st.PID = Running, l.PID
		st.URL, st.Socket = m.own.URLsAt(l.Port, l.Socket)
		st.MemoryCgroup = NewCgroup(m.Dir, st.Confinement).Dir("memory")
		return st, nil
	}
	if saved != nil && saved.Running {
		st.State = Crashed
		st.Reason = m.CrashReason()
	}
	return st, nil
}

// CrashReason explains a crash from the state file and the log.
func (m *Managed) CrashReason() string {
	offset, pid := int64(0), 0
	if saved, err := ReadState(m.Dir); err == nil {
		offset, pid = saved.LogOffset, saved.PID
	}
	return CrashReason(ReadFrom(m.LogPath(), offset), m.t.LogPrefix, m.t.CrashLines, m.t.Main, pid)
}
