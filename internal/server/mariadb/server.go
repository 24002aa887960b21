//go:build unix

package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
		New:    func(dir, binHint string) server.Server { return New(dir, binHint) },
		NewCluster: func(dir, binHint string, t server.Topology) server.Cluster {
			return NewCluster(dir, binHint, t)
		},
		MultiMaster: true,
	})
}

// Kind names the managed server's kind.
const Kind = "mariadb"

var (
	_ server.Server = (*Server)(nil)
	_ server.Hooks  = own{}
)

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
// sets them. BinDir holds mariadbd (see FindBinDir when empty).
type Server struct {
	server.Managed
	// proc is the mariadbd this process started last; exited is closed
	// when it has exited.
	proc   *os.Process
	exited chan struct{}
	// member is the server's place in a Galera cluster, nil for a server
	// of its own.
	member *member
}

// New is the server in dir, run from the binaries in binDir ("": see
// FindBinDir); nothing is touched yet.
func New(dir, binDir string) *Server {
	s := &Server{}
	s.Bind(dir, binDir, &traits, own{s})
	return s
}

var traits = server.Traits{
	Kind: Kind, Title: "MariaDB", Program: "mariadbd", User: "mysql",
	FindBin: FindBinDir, Version: versionName, Known: knownNames, CheckNames: checkNames,
	// MYSQL* and MARIADB* variables are for clients.
	ClientEnv:   []string{"MYSQL", "MARIADB"},
	SocketFile:  socketFile,
	NamesSocket: true,
	LogPrefix:   logLineRE,
	CrashLines:  crashLineRE,
	Main:        "mariadbd",
	StartHint:   "dbrig server start --kind mariadb --dir",
}

// own is what the server does its own way (server.Hooks), kept out of
// Server's methods.
type own struct{ *Server }

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

func (s *Server) pidFile() string { return filepath.Join(s.DataDir(), "mariadbd.pid") }

// secretFile holds the dbrig account's password: the server's own, or
// its cluster's, which every node shares.
func (s *Server) secretFile() string {
	if s.member != nil {
		return s.member.secret
	}
	return filepath.Join(s.Dir, "dbrig-secret")
}

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
	return server.Own(s.tmpDir(), s.Host.Cred)
}

// Exists reports whether Init created the server's data already: a
// joining node's is its empty data directory, which its first start fills.
func (s *Server) Exists() bool {
	data := filepath.Join(s.DataDir(), "mysql")
	if s.member.joiner() {
		data = s.DataDir()
	}
	_, errData := os.Stat(data)
	_, errSecret := os.Stat(s.secretFile())
	return errData == nil && errSecret == nil
}

// Create runs mariadb-install-db in the data directory, which also makes
// the dbrig account with password, kept in the secret file. A node of a
// cluster takes the cluster's password instead, and one that joins it
// makes nothing: its data comes whole from a node of the cluster.
func (o own) Create(ctx context.Context, password string) error {
	if err := o.makeTmpDir(); err != nil {
		return err
	}
	if o.member.joiner() {
		return nil
	}
	install, err := installDB(o.Host.Bin)
	if err != nil {
		return err
	}
	if o.member != nil {
		if password, err = o.password(); err != nil {
			return err
		}
	} else if err := os.WriteFile(o.secretFile(), []byte(password+"\n"), 0o600); err != nil {
		return err
	}
	// The accounts are made by the bootstrap itself, from a file only the
	// server's user can read, removed as soon as it has been read.
	extra := filepath.Join(o.DataDir(), "dbrig-init.sql")
	defer os.Remove(extra)
	if err := o.Host.WriteOwned(extra, []byte(accountsSQL(password))); err != nil {
		return err
	}
	cmd := o.Command(ctx, install,
		"--no-defaults",
		"--datadir="+o.DataDir(),
		"--basedir="+filepath.Dir(o.Host.Bin),
		"--tmpdir="+o.tmpDir(),
		"--skip-test-db",
		"--auth-root-authentication-method=socket",
		"--extra-file="+extra,
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		if o.member == nil {
			os.Remove(o.secretFile())
		}
		return fmt.Errorf("mariadb-install-db in %s: %v: %s", o.DataDir(), err, server.HeadTail(string(out), 8, 8))
	}
	return nil
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

// Prepare refuses a mariadbd left running in the data directory, and
// makes the server's directory for temporary files.
func (o own) Prepare(ctx context.Context, settings map[string]string) (map[string]string, error) {
	if pid, ok := o.alive(); ok {
		return nil, exitcode.Userf("a mariadbd (pid %d) is already running in %s: stop it with dbrig server stop --dir %s", pid, o.Dir, o.Dir)
	}
	if err := o.member.check(settings); err != nil {
		return nil, err
	}
	// A server created before it had a directory of its own gets one.
	return settings, o.makeTmpDir()
}

// Owned tells the settings Start sets itself.
func (o own) Owned(name string) bool {
	name = normalName(name)
	return serverOwned[name] || o.member.owns(name)
}

// Launch starts mariadbd with settings passed as --name=value, for this
// start only, and returns once it accepts connections. A setting the
// server rejects stops the start with the server's own words, as soon as
// it exits.
func (o own) Launch(ctx context.Context, port int, names []string, settings map[string]string) (bool, error) {
	return o.launch(ctx, o.args(o.Live.Socket(), port, names, settings))
}

// args are mariadbd's for a server on socket and port, with settings
// given in the order of names: a node's place in its cluster first.
func (s *Server) args(socket string, port int, names []string, settings map[string]string) []string {
	args := []string{
		"--no-defaults",
		"--datadir=" + s.DataDir(),
		"--basedir=" + filepath.Dir(s.Host.Bin),
		"--tmpdir=" + s.tmpDir(),
		"--socket=" + socket,
		"--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		"--log-error=" + s.LogPath(),
		"--pid-file=" + s.pidFile(),
	}
	args = append(args, s.member.args(settings)...)
	for _, name := range names {
		if !s.member.merges(name) {
			args = append(args, "--"+name+"="+settings[name])
		}
	}
	return args
}

// launch starts one mariadbd and waits until dbrig's account can connect
// through the socket; inUse reports that the port was taken.
func (s *Server) launch(ctx context.Context, args []string) (inUse bool, err error) {
	logStart := server.FileSize(s.LogPath())
	// Not bound to ctx: the server outlives the start.
	cmd := s.Command(context.Background(), "mariadbd", args...)
	// A session of its own: a Ctrl-C meant for dbrig must not reach it.
	cmd.SysProcAttr.Setsid = true
	if err := s.Confined.Start(cmd); err != nil {
		return false, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.proc, s.exited = cmd.Process, exited
	limit := s.member.startLimit()
	deadline := time.Now().Add(limit)
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
			return false, fmt.Errorf("mariadbd in %s did not accept connections within %s: %s",
				s.Dir, limit, logExcerpt(server.ReadFrom(s.LogPath(), logStart)))
		}
	}
}

// Kill ends the mariadbd this process started last, which it failed to
// keep, and waits for it to go.
func (o own) Kill() { o.kill() }

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
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = ServerUser, pw, "unix", s.Live.Socket(), db
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
	keep := server.Messages(log, logLineRE, func(line string) bool {
		return strings.HasPrefix(line, "[ERROR]") && line != "[ERROR] Aborting"
	})
	for i, line := range keep {
		keep[i] = strings.TrimPrefix(line, "[ERROR] ")
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

// Halt shuts the server down cleanly (SIGTERM: InnoDB flushes and closes
// its log, so the next start needs no recovery) and waits for it to go.
func (o own) Halt(ctx context.Context) (gone bool, err error) {
	pid, ok := o.alive()
	if !ok {
		// Another process (dbrig server stop) may have stopped it cleanly.
		if st, err := server.ReadState(o.Dir); err == nil && !st.Running {
			return true, nil
		}
		return true, fmt.Errorf("stopping mariadbd in %s: %w: %s", o.Dir, server.ErrCrashed, o.CrashReason())
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return false, fmt.Errorf("stopping mariadbd (pid %d) in %s: %w", pid, o.Dir, err)
	}
	for {
		if _, ok := o.alive(); !ok {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("stopping mariadbd (pid %d) in %s: %w", pid, o.Dir, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Socket is the running server's unix socket.
func (s *Server) Socket() string { return s.Live.Socket() }

// URLFor is the URL of database db over loopback TCP. It names the file
// that holds the dbrig account's password (passfile=) instead of holding
// it, so it prints as it is, works for whoever can read that file, and
// puts no secret on a command line.
func (s *Server) URLFor(db string) string { return s.urlAt(db, s.Port()) }

// SocketURLFor is the URL of database db through the unix socket.
func (s *Server) SocketURLFor(db string) string { return s.socketURLAt(db, s.Socket()) }

// URLsAt are the URLs of the mysql database on a server listening at port
// and socket.
func (o own) URLsAt(port int, socket string) (tcp, unix string) {
	return o.urlAt("mysql", port), o.socketURLAt("mysql", socket)
}

func (s *Server) urlAt(db string, port int) string {
	return (&url.URL{Scheme: "mariadb", User: url.User(ServerUser),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/" + db,
		RawQuery: url.Values{"passfile": {s.secretFile()}}.Encode()}).String()
}

func (s *Server) socketURLAt(db, socket string) string {
	return (&url.URL{Scheme: "mariadb", User: url.User(ServerUser), Path: "/" + db,
		RawQuery: url.Values{"passfile": {s.secretFile()}, "socket": {socket}}.Encode()}).String()
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

// Find tells whether mariadbd runs, from its pid file, and where it
// listens, from the state file's record of its start.
func (o own) Find(_ context.Context, saved *server.Record) (server.Listening, bool, error) {
	pid, ok := o.alive()
	if !ok || saved == nil {
		return server.Listening{}, false, nil
	}
	return server.Listening{PID: pid, Port: saved.Port, Socket: saved.SocketDir}, true, nil
}

// crashLineRE picks the lines that tell how mariadbd died.
var crashLineRE = regexp.MustCompile(`\[ERROR\]|got signal|Out of memory|Killed|assertion|Assertion`)
