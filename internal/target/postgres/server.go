package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbrig/dbrig/internal/target"
	"github.com/jackc/pgx/v5"
)

// ServerUser is the superuser initdb creates in a managed cluster. Auth is
// trust, so URLs carry no password and nothing secret can leak from them.
const ServerUser = "dbrig"

// serverOwnedSettings are set by Start itself: a sweep that changed them
// could make the server listen beyond loopback or where Server cannot find it.
var serverOwnedSettings = map[string]bool{
	"listen_addresses":        true,
	"port":                    true,
	"unix_socket_directories": true,
	"data_directory":          true,
	"config_file":             true,
	"hba_file":                true,
}

// Server is a PostgreSQL cluster that dbrig creates, starts and stops
// itself, for integration tests and experiment sweeps. Everything it
// writes lives under Dir: the cluster in Dir/data, the server log in
// Dir/server.log and, when the path is short enough, the unix socket in
// Dir/sock.
//
// As root, initdb, pg_ctl and postgres run as an unprivileged user (RunAs,
// else "postgres" if that user exists, else "nobody"), because postgres
// refuses to run as root. Server then chowns what the server writes (data,
// socket dir, log) to that user. The user must also be able to reach
// Dir: temporary directories such as t.TempDir()'s are made 0700 by
// whoever created them, so Server adds search permission (o+x, never read)
// to ancestors of Dir that lie inside os.TempDir(); any other ancestor
// that blocks the user is reported as an error instead of being changed.
//
// The server listens only on 127.0.0.1, on a free port chosen at Start,
// and on its unix socket. Durability settings are left at PostgreSQL's
// defaults.
type Server struct {
	// Dir holds everything the server writes. Required.
	Dir string
	// BinDir holds postgres, initdb and pg_ctl; see FindBinDir when empty.
	BinDir string
	// RunAs names the OS user the server runs as when dbrig runs as root.
	// Ignored otherwise: without root there is no one else to become.
	RunAs string

	mu       sync.Mutex
	bin      string
	cred     *syscall.Credential
	runAs    string // the name behind cred, for messages
	resolved bool
	port     int
	sockDir  string
	sockTemp bool // sockDir was made outside Dir and is removed at Stop
	running  bool
}

// FindBinDir returns the directory holding the PostgreSQL server binaries:
// explicit if set, else $PG_BIN, else `pg_config --bindir`, else the
// directory of postgres found on PATH, else the newest
// /usr/lib/postgresql/*/bin (Debian keeps one per major version there).
// An explicit or $PG_BIN directory that lacks the binaries is an error
// rather than a reason to look elsewhere: the user asked for that one.
func FindBinDir(explicit string) (string, error) {
	if explicit != "" {
		if err := checkServerBinDir(explicit); err != nil {
			return "", err
		}
		return explicit, nil
	}
	if env := os.Getenv("PG_BIN"); env != "" {
		if err := checkServerBinDir(env); err != nil {
			return "", fmt.Errorf("PG_BIN: %w", err)
		}
		return env, nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		// pg_config may come from a client-only package whose bindir has
		// no server, so only trust it when the server is really there.
		if dir := strings.TrimSpace(string(out)); checkServerBinDir(dir) == nil {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		// PATH often holds symlinks (/usr/local/bin/postgres); the real
		// directory is where initdb and pg_ctl of the same build live.
		if real, err := filepath.EvalSymlinks(p); err == nil && checkServerBinDir(filepath.Dir(real)) == nil {
			return filepath.Dir(real), nil
		}
		if dir := filepath.Dir(p); checkServerBinDir(dir) == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		return debianMajor(dirs[i]) > debianMajor(dirs[j])
	})
	for _, dir := range dirs {
		if checkServerBinDir(dir) == nil {
			return dir, nil
		}
	}
	return "", target.Userf("no PostgreSQL server binaries found (postgres, initdb, pg_ctl): " +
		"install PostgreSQL or set PG_BIN to the directory that holds them")
}

// debianMajor orders /usr/lib/postgresql/<major>/bin numerically, so 9.6
// sorts below 10.
func debianMajor(dir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
	return v
}

func checkServerBinDir(dir string) error {
	var missing []string
	for _, name := range []string{"postgres", "initdb", "pg_ctl"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return target.Userf("%s has no PostgreSQL server binaries (%s missing)", dir, strings.Join(missing, ", "))
	}
	return nil
}

// ServerVersion is what `postgres --version` reports.
type ServerVersion struct {
	Major, Minor int
	// Raw is the full line, e.g. "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
	Raw string
}

func (v ServerVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Before PostgreSQL 10 versions had three parts (9.6.24); the first two are
// then the major version, so Minor is kept as 6 and the patch level dropped.
var pgVersionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)(?:\.(\d+))?`)

// ReadServerVersion runs `postgres --version` from binDir.
func ReadServerVersion(ctx context.Context, binDir string) (ServerVersion, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "--version").Output()
	if err != nil {
		return ServerVersion{}, fmt.Errorf("postgres --version: %w", err)
	}
	return parseServerVersion(string(out))
}

func parseServerVersion(s string) (ServerVersion, error) {
	s = strings.TrimSpace(s)
	m := pgVersionRE.FindStringSubmatch(s)
	if m == nil {
		return ServerVersion{}, fmt.Errorf("cannot parse PostgreSQL version from %q", s)
	}
	v := ServerVersion{Raw: s}
	v.Major, _ = strconv.Atoi(m[1])
	if m[2] != "" {
		v.Minor, _ = strconv.Atoi(m[2])
	}
	return v, nil
}

// Version reports the version of the binaries this server runs.
func (s *Server) Version(ctx context.Context) (ServerVersion, error) {
	s.mu.Lock()
	err := s.resolve()
	bin := s.bin
	s.mu.Unlock()
	if err != nil {
		return ServerVersion{}, err
	}
	return ReadServerVersion(ctx, bin)
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }

// LogPath is the server's log file; on a failed start its last lines are
// already quoted in the error.
func (s *Server) LogPath() string { return filepath.Join(s.Dir, "server.log") }

// resolve finds the binaries and the user to run as once; both are needed
// by Init and Start alike.
func (s *Server) resolve() error {
	if s.resolved {
		return nil
	}
	if s.Dir == "" {
		return errors.New("postgres server: Dir is not set")
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return err
	}
	s.Dir = dir
	bin, err := FindBinDir(s.BinDir)
	if err != nil {
		return err
	}
	// Commands run with Dir as their working directory, so a relative
	// binary path would point somewhere else.
	if s.bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		if s.cred, s.runAs, err = unprivilegedCredential(s.RunAs); err != nil {
			return err
		}
	}
	s.resolved = true
	return nil
}

func unprivilegedCredential(name string) (*syscall.Credential, string, error) {
	var u *user.User
	var err error
	if name != "" {
		u, err = user.Lookup(name)
	} else if u, err = user.Lookup("postgres"); err != nil {
		u, err = user.Lookup("nobody")
	}
	if err != nil {
		return nil, "", fmt.Errorf("running as root, and no user to run postgres as: %w", err)
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
		return nil, "", fmt.Errorf("user %s is root; postgres refuses to run as root", u.Username)
	}
	// An empty Groups drops root's supplementary groups too.
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, u.Username, nil
}

// command builds a command for one of the server binaries, as the
// unprivileged user when there is one.
func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	// The caller's working directory may be unreachable for the server's
	// user, and initdb and pg_ctl complain about that.
	cmd.Dir = s.Dir
	// PG* variables meant for clients (PGDATA, PGPORT, PGOPTIONS...) must not
	// steer the server; everything it needs is on the command line.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	// pg_ctl's postmaster writes to the log, not our pipes; this only bounds
	// the wait if a stray child ever keeps them open.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// own makes path belong to the server's user, when it runs as one.
func (s *Server) own(path string) error {
	if s.cred == nil {
		return nil
	}
	return os.Lchown(path, int(s.cred.Uid), int(s.cred.Gid))
}

// Init creates the cluster in Dir/data with initdb. It does nothing when a
// cluster is already there, so a sweep can Init once and Start many times.
func (s *Server) Init(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.resolve(); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(s.dataDir(), "PG_VERSION")); err == nil {
		return nil
	}
	// Checked before MkdirAll too, so a Dir the user cannot reach fails
	// without leaving directories behind.
	if err := s.checkReachable(false); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	if err := s.checkReachable(true); err != nil {
		return err
	}
	// initdb wants an empty directory it owns; making it ourselves lets
	// Dir stay root's while data belongs to the server's user.
	if err := os.Mkdir(s.dataDir(), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := s.own(s.dataDir()); err != nil {
		return err
	}
	cmd := s.command(ctx, "initdb",
		"-D", s.dataDir(),
		"--auth=trust",
		"-U", ServerUser,
		"--encoding=UTF8",
		"--locale=C",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb in %s: %v: %s", s.dataDir(), err, lastLines(string(out), 8))
	}
	return nil
}

// checkReachable lets the server's user walk down to Dir, or says why it
// cannot; see Server. With fix unset it only checks the ancestors that
// exist.
func (s *Server) checkReachable(fix bool) error {
	if s.cred == nil {
		return nil
	}
	if fix {
		if err := os.Chmod(s.Dir, 0o755); err != nil {
			return err
		}
	}
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	for dir := filepath.Dir(s.Dir); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil && (fix || !errors.Is(err, os.ErrNotExist)) {
			return err
		}
		if err == nil && !canSearch(fi, s.cred) {
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(tmp, real)
			if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
				return target.Userf("postgres runs as user %s, which cannot enter %s (mode %04o): "+
					"put the server directory elsewhere or grant search permission",
					s.runAs, dir, fi.Mode().Perm())
			}
			if fix {
				if err := os.Chmod(dir, fi.Mode().Perm()|0o001); err != nil {
					return err
				}
			}
		}
		if parent := filepath.Dir(dir); parent == dir {
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

// maxSocketPath keeps the socket path (dir + "/.s.PGSQL.NNNNN") under the
// 107 bytes sun_path allows, with room to spare.
const maxSocketPath = 100

// unsafeSocketDir: unix_socket_directories is a comma-separated list whose
// entries are trimmed, and the value crosses pg_ctl's shell, so a socket
// directory is only used when its path is plain.
var unsafeSocketDir = regexp.MustCompile(`[^A-Za-z0-9/._+-]`)

func (s *Server) makeSocketDir() error {
	dir := filepath.Join(s.Dir, "sock")
	if len(dir)+len("/.s.PGSQL.65535") < maxSocketPath && !unsafeSocketDir.MatchString(dir) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		s.sockDir, s.sockTemp = dir, false
		return s.own(dir)
	}
	parent := os.TempDir()
	if len(parent) > 40 || unsafeSocketDir.MatchString(parent) {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "dbrig-sock-")
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	s.sockDir, s.sockTemp = dir, true
	return s.own(dir)
}

// Start starts the server with settings passed as `-c name=value`, and
// returns once it accepts connections. A server that fails to start (a
// rejected setting, say) is reported with its own log lines, as soon as
// the postmaster exits, rather than after a timeout.
func (s *Server) Start(ctx context.Context, settings map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return fmt.Errorf("postgres server in %s is already running", s.Dir)
	}
	if err := s.resolve(); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(s.dataDir(), "PG_VERSION")); err != nil {
		return fmt.Errorf("no cluster in %s: call Init first", s.dataDir())
	}
	// A postmaster left over from an earlier process would make pg_ctl fail
	// and the cleanup after that failure stop it; refuse before touching it.
	if s.command(ctx, "pg_ctl", "status", "-D", s.dataDir()).Run() == nil {
		return target.Userf("a postgres server is already running in %s: stop it with %s stop -D %s",
			s.dataDir(), filepath.Join(s.bin, "pg_ctl"), s.dataDir())
	}
	names := make([]string, 0, len(settings))
	for name := range settings {
		if serverOwnedSettings[strings.ToLower(name)] {
			return target.Userf("setting %s is managed by dbrig's server and cannot be overridden", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	if err := s.checkReachable(true); err != nil {
		return err
	}
	// pg_ctl appends to the log as the server's user, so it must exist and
	// belong to that user before pg_ctl runs.
	f, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	if err := s.own(s.LogPath()); err != nil {
		return err
	}
	if err := s.makeSocketDir(); err != nil {
		return err
	}

	var lastErr error
	// A free port can be taken between choosing it and the postmaster
	// binding it; that race is the only failure worth another try.
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freeLoopbackPort()
		if err != nil {
			lastErr = err
			break
		}
		var opts []string
		opts = append(opts,
			"-c", "listen_addresses=127.0.0.1",
			"-c", "port="+strconv.Itoa(port),
			"-c", "unix_socket_directories="+s.sockDir,
		)
		for _, name := range names {
			opts = append(opts, "-c", name+"="+settings[name])
		}
		var inUse bool
		inUse, lastErr = s.pgctlStart(ctx, opts)
		if lastErr == nil {
			s.port = port
			s.running = true
			return nil
		}
		if !inUse || ctx.Err() != nil {
			break
		}
	}
	s.removeTempSocketDir()
	return lastErr
}

// pgctlStart runs one `pg_ctl start`; inUse reports that the port was taken.
func (s *Server) pgctlStart(ctx context.Context, opts []string) (inUse bool, err error) {
	logStart := fileSize(s.LogPath())
	quoted := make([]string, len(opts))
	for i, o := range opts {
		quoted[i] = shellQuote(o)
	}
	cmd := s.command(ctx, "pg_ctl", "start",
		"-D", s.dataDir(),
		"-l", s.LogPath(),
		"-w", "-t", "60",
		"-o", strings.Join(quoted, " "),
	)
	out, runErr := cmd.CombinedOutput()
	if runErr == nil {
		return false, nil
	}
	// pg_ctl may have been killed by ctx while the postmaster came up; an
	// immediate stop keeps it from outliving the failed Start.
	s.stopQuietly()
	logTail := readFrom(s.LogPath(), logStart)
	msg := serverLogExcerpt(logTail)
	if msg == "" {
		msg = lastLines(string(out), 4)
	}
	if ctx.Err() != nil {
		return false, fmt.Errorf("starting postgres in %s: %w: %s", s.dataDir(), ctx.Err(), msg)
	}
	return strings.Contains(logTail, "Address already in use"),
		target.Userf("postgres in %s did not start: %s", s.dataDir(), msg)
}

func (s *Server) stopQuietly() {
	if _, err := os.Stat(filepath.Join(s.dataDir(), "postmaster.pid")); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = s.command(ctx, "pg_ctl", "stop", "-D", s.dataDir(), "-m", "immediate", "-w", "-t", "20").Run()
}

// Stop shuts the server down with a fast shutdown: sessions are ended,
// and a checkpoint is written, so the next Start needs no recovery.
// Stopping a server that is not running does nothing.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return nil
	}
	out, err := s.command(ctx, "pg_ctl", "stop", "-D", s.dataDir(), "-m", "fast", "-w", "-t", "60").CombinedOutput()
	if err != nil {
		// A server that died on its own is stopped all the same; forgetting
		// it lets a later Start try again.
		if _, statErr := os.Stat(filepath.Join(s.dataDir(), "postmaster.pid")); statErr != nil {
			s.running = false
			s.removeTempSocketDir()
		}
		return fmt.Errorf("stopping postgres in %s: %v: %s", s.dataDir(), err, lastLines(string(out), 4))
	}
	s.running = false
	s.port = 0
	s.removeTempSocketDir()
	return nil
}

func (s *Server) removeTempSocketDir() {
	if s.sockTemp && s.sockDir != "" {
		os.RemoveAll(s.sockDir)
		s.sockDir, s.sockTemp = "", false
	}
}

// Running reports whether Start succeeded and Stop has not yet run.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Port is the loopback TCP port of the running server, 0 when stopped.
func (s *Server) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// SocketDir is the directory of the running server's unix socket.
func (s *Server) SocketDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sockDir
}

// URL connects to the postgres database over loopback TCP.
func (s *Server) URL() string { return s.URLFor("postgres") }

// URLFor connects to database db over loopback TCP.
func (s *Server) URLFor(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(ServerUser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// SocketURLFor connects to database db over the unix socket, which skips
// the TCP stack when a measurement wants that.
func (s *Server) SocketURLFor(db string) string {
	q := url.Values{}
	q.Set("host", s.SocketDir())
	q.Set("port", strconv.Itoa(s.Port()))
	q.Set("user", ServerUser)
	q.Set("sslmode", "disable")
	u := url.URL{Scheme: "postgres", Path: "/" + db, RawQuery: q.Encode()}
	return u.String()
}

// CreateDB creates database name, owned by ServerUser.
func (s *Server) CreateDB(ctx context.Context, name string) error {
	return s.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
}

// DropDB drops database name if it exists, ending any sessions still
// connected to it.
func (s *Server) DropDB(ctx context.Context, name string) error {
	return s.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func (s *Server) admin(ctx context.Context, sql string) error {
	if !s.Running() {
		return fmt.Errorf("postgres server in %s is not running", s.Dir)
	}
	conn, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// shellQuote: pg_ctl hands -o to /bin/sh, so each option is quoted to
// arrive as one word whatever characters a setting's value holds.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom reads what the server logged since offset, capped so a chatty
// failure cannot flood the error.
func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxTail = 64 << 10
	if size := fileSize(path); size-offset > maxTail {
		offset = size - maxTail
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// The default log_line_prefix, "%m [%p] ", repeats nothing a person needs.
var logPrefixRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] `)

var logSeverityRE = regexp.MustCompile(`\b(PANIC|FATAL|ERROR|WARNING|DETAIL|HINT|LOG):  `)

// serverLogExcerpt picks the lines that say why a start failed: anything
// above LOG, its DETAIL and HINT, and LOG lines reporting a failure (a port
// in use is only LOG-level). Routine startup and shutdown lines are left out.
func serverLogExcerpt(log string) string {
	var keep []string
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(logPrefixRE.ReplaceAllString(line, ""))
		if line == "" {
			continue
		}
		m := logSeverityRE.FindStringSubmatch(line)
		switch {
		case m == nil:
			continue
		case m[1] == "LOG" && !strings.Contains(line, "could not"):
			continue
		}
		keep = append(keep, strings.Join(strings.Fields(line), " "))
	}
	if len(keep) == 0 {
		return lastLines(log, 5)
	}
	if len(keep) > 8 {
		keep = keep[len(keep)-8:]
	}
	return strings.Join(keep, "; ")
}

// lastLines joins the last n non-blank lines of s into one line.
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
