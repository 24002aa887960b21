//go:build unix

package mariadb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/go-sql-driver/mysql"
)

func init() {
	server.Register(server.Kind{
		Name:   Kind,
		Target: "mariadb",
		New:    func(dir, binHint string) server.Server { return &Server{Dir: dir, BinDir: binHint} },
		Attach: func(dir string) (server.Server, error) {
			s, err := Attach(dir)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
	})
}

// Kind names the managed server's kind.
const Kind = "mariadb"

var _ server.Server = (*Server)(nil)

// ServerUser is the account dbrig creates in a managed server, with every
// privilege, from 127.0.0.1 and the socket only. Its password is made at
// Init and kept in Dir/dbrig-secret, readable by dbrig's user alone; the
// server's URLs name that file (passfile=) and hold no password. root can log in only through the socket, as
// the OS's root (unix_socket authentication).
const ServerUser = "dbrig"

// serverOwned are set by Start itself: a sweep that changed them could make
// the server listen beyond loopback, or where Server cannot find it, or
// write where dbrig does not look.
var serverOwned = map[string]bool{
	"datadir": true, "socket": true, "port": true, "bind_address": true,
	"skip_networking": true, "log_error": true, "pid_file": true, "user": true,
	"basedir": true, "defaults_file": true, "defaults_extra_file": true,
	"no_defaults": true, "skip_grant_tables": true, "init_file": true,
}

// Server is a MariaDB server that dbrig creates, starts and stops itself.
// Everything it writes lives under Dir: the data in Dir/data, the error
// log in Dir/server.log (appended to by every start), the password in
// Dir/dbrig-secret, what it was started with in Dir/dbrig-server.json, its
// temporary files in Dir/tmp and, when the path is short enough, the socket
// in Dir/sock.
//
// As root, the server runs as an unprivileged user (RunAs, else "mysql"
// if that user exists, else "nobody"). It listens on 127.0.0.1 at a free
// port and on its socket, and nowhere else. Durability settings stay at
// MariaDB's defaults (innodb_flush_log_at_trx_commit=1) unless a start
// sets them.
type Server struct {
	// Dir holds everything the server writes. Required.
	Dir string
	// BinDir holds mariadbd; see FindBinDir when empty.
	BinDir string
	// RunAs names the OS user the server runs as when dbrig runs as root.
	RunAs string

	mu       sync.Mutex
	host     server.Host
	live     server.Live
	settings map[string]string
	confined server.Confined
	// proc is the mariadbd this process started last; exited is closed
	// when it has exited.
	proc   *os.Process
	exited chan struct{}
}

// FindBinDir returns the directory holding mariadbd: explicit if set,
// else $MARIADB_BIN, else where mariadbd is on PATH, else /usr/sbin
// (Debian's packages). An explicit or $MARIADB_BIN directory that lacks it
// is an error: the user asked for that one.
func FindBinDir(explicit string) (string, error) {
	for _, dir := range []string{explicit, os.Getenv("MARIADB_BIN")} {
		if dir == "" {
			continue
		}
		if !isExecutable(filepath.Join(dir, "mariadbd")) {
			return "", exitcode.Userf("no mariadbd in %s", dir)
		}
		return dir, nil
	}
	if p, err := exec.LookPath("mariadbd"); err == nil {
		return filepath.Dir(p), nil
	}
	if isExecutable("/usr/sbin/mariadbd") {
		return "/usr/sbin", nil
	}
	return "", exitcode.Userf("no MariaDB server binaries found (mariadbd is not on PATH nor in /usr/sbin): install mariadb-server, or set MARIADB_BIN")
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

// installDB finds mariadb-install-db beside mariadbd, in a build's
// scripts directory, or on PATH.
func installDB(binDir string) (string, error) {
	for _, p := range []string{
		filepath.Join(binDir, "mariadb-install-db"),
		filepath.Join(filepath.Dir(binDir), "bin", "mariadb-install-db"),
		filepath.Join(filepath.Dir(binDir), "scripts", "mariadb-install-db"),
	} {
		if isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("mariadb-install-db"); err == nil {
		return p, nil
	}
	return "", exitcode.Userf("no mariadb-install-db beside %s/mariadbd nor on PATH", binDir)
}

func (s *Server) dataDir() string    { return filepath.Join(s.Dir, "data") }
func (s *Server) pidFile() string    { return filepath.Join(s.dataDir(), "mariadbd.pid") }
func (s *Server) secretFile() string { return filepath.Join(s.Dir, "dbrig-secret") }

// tmpDir is the server's own directory for temporary files. In the shared
// /tmp, a mariadbd that starts deletes every "#sql..." file there, the
// temporary tables of any other server that is running or being created
// included: concurrent mariadb-install-db runs then failed with "Error on
// delete of '/tmp/#sql-temptable-...'" or "Unknown table
// 'mysql.tmp_user_sys'".
func (s *Server) tmpDir() string { return filepath.Join(s.Dir, "tmp") }

// makeTmpDir makes tmpDir, for the server's user alone.
func (s *Server) makeTmpDir() error {
	if err := os.Mkdir(s.tmpDir(), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return server.Own(s.tmpDir(), s.host.Cred)
}

// LogPath is the server's error log; every start appends to it.
func (s *Server) LogPath() string { return filepath.Join(s.Dir, "server.log") }

// Exists reports whether Init created the server's data already.
func (s *Server) Exists() bool {
	_, errData := os.Stat(filepath.Join(s.dataDir(), "mysql"))
	_, errSecret := os.Stat(s.secretFile())
	return errData == nil && errSecret == nil
}

// resolve finds the binaries and the user to run as once.
func (s *Server) resolve() error {
	return s.host.Resolve(&s.Dir, s.BinDir, s.RunAs, FindBinDir, "mysql", "mariadbd")
}

// command builds a command for a server binary, as the unprivileged user
// when there is one. MYSQL* and MARIADB* variables are for clients.
func (s *Server) command(ctx context.Context, path string, args ...string) *exec.Cmd {
	return s.host.Command(ctx, s.Dir, []string{"MYSQL", "MARIADB"}, path, args...)
}

// Init creates the server's data in Dir/data with mariadb-install-db, and
// the dbrig account with a password made here. It does nothing when the
// data is there already.
func (s *Server) Init(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.resolve(); err != nil {
		return err
	}
	if s.Exists() {
		return nil
	}
	install, err := installDB(s.host.Bin)
	if err != nil {
		return err
	}
	if err := s.host.MakeDataDir(s.Dir, s.dataDir(), "mariadbd"); err != nil {
		return err
	}
	if err := s.makeTmpDir(); err != nil {
		return err
	}
	password, err := newPassword()
	if err != nil {
		return err
	}
	if err := os.WriteFile(s.secretFile(), []byte(password+"\n"), 0o600); err != nil {
		return err
	}
	// The accounts are made by the bootstrap itself, from a file only the
	// server's user can read, removed as soon as it has been read.
	extra := filepath.Join(s.dataDir(), "dbrig-init.sql")
	if err := os.WriteFile(extra, []byte(accountsSQL(password)), 0o600); err != nil {
		return err
	}
	defer os.Remove(extra)
	if err := server.Own(extra, s.host.Cred); err != nil {
		return err
	}
	cmd := s.command(ctx, install,
		"--no-defaults",
		"--datadir="+s.dataDir(),
		"--basedir="+filepath.Dir(s.host.Bin),
		"--tmpdir="+s.tmpDir(),
		"--skip-test-db",
		"--auth-root-authentication-method=socket",
		"--extra-file="+extra,
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(s.secretFile())
		return fmt.Errorf("mariadb-install-db in %s: %v: %s", s.dataDir(), err, server.HeadTail(string(out), 8, 8))
	}
	return nil
}

// newPassword is 32 hex digits: no character a URL has to escape.
func newPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// accountsSQL makes the dbrig account and drops the anonymous ones. The
// bootstrap runs without grant tables until FLUSH PRIVILEGES loads them.
func accountsSQL(password string) string {
	var b strings.Builder
	b.WriteString("FLUSH PRIVILEGES;\nDELETE FROM mysql.global_priv WHERE User = '';\n")
	for _, host := range []string{"localhost", "127.0.0.1"} {
		fmt.Fprintf(&b, "CREATE USER '%s'@'%s' IDENTIFIED BY '%s';\n", ServerUser, host, password)
		fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON *.* TO '%s'@'%s' WITH GRANT OPTION;\n", ServerUser, host)
	}
	return b.String()
}

func (s *Server) password() (string, error) {
	b, err := os.ReadFile(s.secretFile())
	if err != nil {
		return "", fmt.Errorf("the dbrig account's password: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// socketFile is the socket's name in its directory.
const socketFile = "mariadb.sock"

// Start starts mariadbd with settings passed as --name=value, for this
// start only, and returns once it accepts connections. A setting the
// server rejects stops the start with the server's own words, as soon as
// it exits.
func (s *Server) Start(ctx context.Context, settings map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live.Running() {
		return fmt.Errorf("mariadb server in %s is already running", s.Dir)
	}
	if err := s.resolve(); err != nil {
		return err
	}
	if !s.Exists() {
		return fmt.Errorf("no MariaDB server in %s: call Init first", s.Dir)
	}
	if pid, ok := s.alive(); ok {
		return exitcode.Userf("a mariadbd (pid %d) is already running in %s: stop it with dbrig server stop --dir %s", pid, s.Dir, s.Dir)
	}
	if err := server.WriteStopped(s.Dir); err != nil {
		return err
	}
	names, err := server.SettingOrder(settings, func(name string) bool { return serverOwned[normalName(name)] })
	if err != nil {
		return err
	}
	logStart, err := s.host.MakeLog(s.Dir, s.LogPath(), "mariadbd")
	if err != nil {
		return err
	}
	// A server created before it had a directory of its own gets one.
	if err := s.makeTmpDir(); err != nil {
		return err
	}
	sockDir, temp, err := server.MakeSocketDir(s.Dir, socketFile, s.host.Cred)
	if err != nil {
		return err
	}
	s.live.Listen(filepath.Join(sockDir, socketFile), sockDir, temp)
	if err := s.confined.Create(); err != nil {
		return err
	}
	return server.Launch(ctx, &s.live, &s.confined, func(port int) (bool, error) {
		args := []string{
			"--no-defaults",
			"--datadir=" + s.dataDir(),
			"--basedir=" + filepath.Dir(s.host.Bin),
			"--tmpdir=" + s.tmpDir(),
			"--socket=" + s.live.Socket(),
			"--port=" + strconv.Itoa(port),
			"--bind-address=127.0.0.1",
			"--log-error=" + s.LogPath(),
			"--pid-file=" + s.pidFile(),
		}
		for _, name := range names {
			args = append(args, "--"+name+"="+settings[name])
		}
		return s.launch(ctx, args)
	}, func() error {
		s.settings = maps.Clone(settings)
		return s.writeStarted(ctx, logStart)
	}, s.kill)
}

// launch starts one mariadbd and waits until dbrig's account can connect
// through the socket; inUse reports that the port was taken.
func (s *Server) launch(ctx context.Context, args []string) (inUse bool, err error) {
	logStart := server.FileSize(s.LogPath())
	// Not bound to ctx: the server outlives the start.
	cmd := s.command(context.Background(), filepath.Join(s.host.Bin, "mariadbd"), args...)
	// A session of its own: a Ctrl-C meant for dbrig must not reach it.
	cmd.SysProcAttr.Setsid = true
	if err := s.confined.Start(cmd); err != nil {
		return false, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.proc, s.exited = cmd.Process, exited
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := s.ping(ctx); err == nil {
			return false, nil
		}
		select {
		case <-exited:
			tail := server.ReadFrom(s.LogPath(), logStart)
			return strings.Contains(tail, "Address already in use"),
				exitcode.Userf("mariadbd in %s did not start: %s", s.Dir, logExcerpt(tail))
		case <-ctx.Done():
			s.kill()
			return false, fmt.Errorf("starting mariadbd in %s: %w", s.Dir, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return false, fmt.Errorf("mariadbd in %s did not accept connections within 2 minutes: %s",
				s.Dir, logExcerpt(server.ReadFrom(s.LogPath(), logStart)))
		}
	}
}

// kill ends the mariadbd this process started last, which it failed to
// keep, and waits for it to go.
func (s *Server) kill() {
	if s.proc == nil {
		return
	}
	s.proc.Kill()
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
	}
}

// ping connects through the socket as dbrig.
func (s *Server) ping(ctx context.Context) error {
	db, err := s.admin("")
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// admin is a connection pool to database db through the socket.
func (s *Server) admin(db string) (*sql.DB, error) {
	pw, err := s.password()
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = ServerUser, pw, "unix", s.live.Socket(), db
	cfg.Timeout = 5 * time.Second
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// logLineRE takes the date, time and thread off an error log line:
// "2026-11-22  8:41:43 0 [ERROR] ...".
var logLineRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d +\d+:\d\d:\d\d \d+ `)

// logExcerpt picks the lines that say why a start failed, in one line:
// the [ERROR]s but for the closing "Aborting".
func logExcerpt(log string) string {
	var keep []string
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(logLineRE.ReplaceAllString(line, ""))
		if !strings.HasPrefix(line, "[ERROR]") || line == "[ERROR] Aborting" {
			continue
		}
		keep = append(keep, strings.Join(strings.Fields(strings.TrimPrefix(line, "[ERROR] ")), " "))
	}
	if len(keep) == 0 {
		return server.LastLines(log, 4)
	}
	if len(keep) > 4 {
		keep = keep[:4]
	}
	return strings.Join(keep, "; ")
}

// alive reads the pid file, and tells whether that process still runs.
func (s *Server) alive() (int, bool) {
	b, err := os.ReadFile(s.pidFile())
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return pid, false
	}
	return pid, !server.IsZombie(pid)
}

// Stop shuts the server down cleanly (SIGTERM: InnoDB flushes and closes
// its log, so the next start needs no recovery) and waits for it to go.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live.Running() {
		return server.AckCrash(s.Dir, func() (bool, error) {
			if err := s.resolve(); err != nil {
				return false, err
			}
			_, up := s.alive()
			return up, nil
		}, &s.confined)
	}
	pid, ok := s.alive()
	if !ok {
		s.live.Down()
		_ = s.confined.Remove()
		// Another process (dbrig server stop) may have stopped it cleanly.
		if st, err := server.ReadState(s.Dir); err == nil && !st.Running {
			return nil
		}
		return fmt.Errorf("stopping mariadbd in %s: %w: %s", s.Dir, server.ErrCrashed, s.crashReason())
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping mariadbd (pid %d) in %s: %w", pid, s.Dir, err)
	}
	for {
		if _, ok := s.alive(); !ok {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopping mariadbd (pid %d) in %s: %w", pid, s.Dir, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.live.Down()
	return errors.Join(server.WriteStopped(s.Dir), s.confined.Remove())
}

// Running reports whether Start succeeded and Stop has not yet run.
func (s *Server) Running() bool { return s.live.Running() }

// Port is the loopback TCP port of the running server, 0 when stopped.
func (s *Server) Port() int { return s.live.Port() }

// Socket is the running server's unix socket.
func (s *Server) Socket() string { return s.live.Socket() }

// URLFor is the URL of database db over loopback TCP. It names the file
// that holds the dbrig account's password (passfile=) instead of holding
// it, so it prints as it is, works for whoever can read that file, and
// puts no secret on a command line.
func (s *Server) URLFor(db string) string {
	return (&url.URL{Scheme: "mariadb", User: url.User(ServerUser),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())), Path: "/" + db,
		RawQuery: url.Values{"passfile": {s.secretFile()}}.Encode()}).String()
}

// SocketURLFor is the URL of database db through the unix socket.
func (s *Server) SocketURLFor(db string) string {
	return (&url.URL{Scheme: "mariadb", User: url.User(ServerUser), Path: "/" + db,
		RawQuery: url.Values{"passfile": {s.secretFile()}, "socket": {s.Socket()}}.Encode()}).String()
}

// CreateDB creates database name unless it exists.
func (s *Server) CreateDB(ctx context.Context, name string) error {
	return s.exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteName(name))
}

// DropDB drops database name if it exists.
func (s *Server) DropDB(ctx context.Context, name string) error {
	return s.exec(ctx, "DROP DATABASE IF EXISTS "+quoteName(name))
}

func quoteName(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

func (s *Server) exec(ctx context.Context, stmt string) error {
	if !s.Running() {
		return fmt.Errorf("mariadb server in %s is not running", s.Dir)
	}
	db, err := s.admin("")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

func (s *Server) writeStarted(ctx context.Context, logOffset int64) error {
	st := s.host.Started(Kind, s.live.Port(), s.live.Socket(), s.settings, logOffset, s.confined.Get())
	if v, err := readVersion(ctx, s.host.Bin); err == nil {
		st.Version = v.Name()
	}
	st.PID, _ = s.alive()
	return server.WriteState(s.Dir, st)
}

// Confine sets the confinement of the starts that follow: mariadbd is then
// started inside the server's cgroup.
func (s *Server) Confine(c server.Confinement) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confined.Confine(s.Dir, s.live.Running(), c)
}

// Attach returns the server dbrig manages in dir, as another process left
// it, running or not.
func Attach(dir string) (*Server, error) {
	abs, st, err := server.Found(dir, func(abs string) bool { return (&Server{Dir: abs}).Exists() },
		"MariaDB", "dbrig server start --kind mariadb --dir")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: abs}
	if st != nil {
		s.BinDir, s.RunAs, s.settings = st.BinDir, st.RunAs, st.Settings
		s.confined.Set(abs, st.Confinement())
	}
	if _, err := s.host.Locked(&s.mu, s.resolve); err != nil {
		return nil, err
	}
	if _, ok := s.alive(); ok && st != nil {
		dir := filepath.Dir(st.SocketDir)
		s.live.Listen(st.SocketDir, dir, dir != filepath.Join(abs, "sock"))
		s.live.Up(st.Port)
	}
	return s, nil
}

// Status reports whether the server runs, and if dbrig started it and it
// is gone without a stop, that it crashed and what its log says.
func (s *Server) Status(ctx context.Context) (server.Status, error) {
	if _, err := s.host.Locked(&s.mu, s.resolve); err != nil {
		return server.Status{}, err
	}
	s.mu.Lock()
	settings := maps.Clone(s.settings)
	s.mu.Unlock()
	version := ""
	if v, err := readVersion(ctx, s.host.Bin); err == nil {
		version = v.Name()
	}
	st, saved, err := s.host.SavedStatus(s.Dir, version, s.LogPath(), settings)
	if err != nil {
		return st, err
	}
	if pid, ok := s.alive(); ok && saved != nil {
		found := &Server{Dir: s.Dir}
		found.live.Listen(saved.SocketDir, filepath.Dir(saved.SocketDir), false)
		found.live.Up(saved.Port)
		st.State, st.PID = server.Running, pid
		st.URL, st.Socket = found.URLFor("mysql"), found.SocketURLFor("mysql")
		st.MemoryCgroup = server.NewCgroup(s.Dir, st.Confinement).Dir("memory")
		return st, nil
	}
	if saved != nil && saved.Running {
		st.State = server.Crashed
		st.Reason = s.crashReason()
	}
	return st, nil
}

// crashLineRE picks the lines that tell how mariadbd died.
var crashLineRE = regexp.MustCompile(`\[ERROR\]|got signal|Out of memory|Killed|assertion|Assertion`)

// crashReason explains a crash from the state file and the log.
func (s *Server) crashReason() string {
	offset, pid := int64(0), 0
	if saved, err := server.ReadState(s.Dir); err == nil {
		offset, pid = saved.LogOffset, saved.PID
	}
	return server.CrashReason(server.ReadFrom(s.LogPath(), offset), logLineRE, crashLineRE, "mariadbd", pid)
}
