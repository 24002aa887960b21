//go:build unix

package postgres

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/atomicfile"
	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/jackc/pgx/v5"
)

func init() {
	server.Register(server.Kind{
		Name:    Kind,
		Target:  "postgres",
		Default: true,
		New:     func(dir, binHint string) server.Server { return New(dir, binHint) },
		NewCluster: func(dir, binHint string, t server.Topology) server.Cluster {
			return NewCluster(dir, binHint, t)
		},
		HA: []string{HAPatroni},
	})
}

var (
	_ server.Server = (*Server)(nil)
	_ server.Hooks  = own{}
)

// Kind names the managed server's kind.
const Kind = "postgres"

// ServerUser is the superuser initdb creates in a managed cluster, with a
// password generated for the cluster (scram-sha-256); pg_hba.conf lets no
// one in without a password, on the socket and on 127.0.0.1. The password is
// in Dir/pgpass, readable by its owner alone, and URLs name that file
// (passfile=), so they carry no secret and work only for whoever can read
// it.
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
// Dir/server.log (appended to by every start), what it was started with in
// Dir/dbrig-server.json (read by Attach and Status from another process)
// and, when the path is short enough, the unix socket in Dir/sock.
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
// defaults; pg_stat_statements and track_io_timing are on unless turned
// off (see withStatsDefaults). BinDir holds postgres, initdb and pg_ctl
// (see FindBinDir when empty).
type Server struct {
	server.Managed
	// peer, when set, makes the server a node of a cluster.
	peer *peering
}

// New is the server in dir, run from the binaries in binDir ("": see
// FindBinDir); nothing is touched yet.
func New(dir, binDir string) *Server {
	s := &Server{}
	s.Bind(dir, binDir, &traits, own{s})
	return s
}

var traits = server.Traits{
	Kind: Kind, Title: "PostgreSQL", Program: "postgres", User: "postgres",
	FindBin: FindBinDir, Version: versionName, Known: describeConfig, CheckNames: checkNames,
	// PG* variables are for clients (PGDATA, PGPORT, PGOPTIONS...).
	ClientEnv:  []string{"PG"},
	SocketFile: socketFile,
	LogPrefix:  logPrefixRE,
	CrashLines: crashLineRE,
	Main:       "the postmaster",
	StartHint:  "dbrig server start --dir",
}

// own is what the server does its own way (server.Hooks), kept out of
// Server's methods.
type own struct{ *Server }

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
	return "", exitcode.Userf("no PostgreSQL server binaries found (postgres, initdb, pg_ctl): " +
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
		return exitcode.Userf("%s has no PostgreSQL server binaries (%s missing)", dir, strings.Join(missing, ", "))
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

// Name is Raw as a person would write it: "PostgreSQL 15.18 (Debian
// 15.18-0+deb12u1)", without the program name postgres puts first.
func (v ServerVersion) Name() string {
	if _, rest, ok := strings.Cut(v.Raw, "(PostgreSQL) "); ok {
		return "PostgreSQL " + rest
	}
	return v.Raw
}

// Before PostgreSQL 10 versions had three parts (9.6.24); the first two are
// then the major version, so Minor is kept as 6 and the patch level dropped.
var pgVersionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)(?:\.(\d+))?`)

// ReadServerVersion runs `postgres --version` from binDir.
func ReadServerVersion(ctx context.Context, binDir string) (ServerVersion, error) {
	out, err := server.BinOutput(ctx, binDir, "postgres", "--version")
	if err != nil {
		return ServerVersion{}, err
	}
	return parseServerVersion(string(out))
}

// versionName names the version of the binaries in binDir.
func versionName(ctx context.Context, binDir string) (string, error) {
	v, err := ReadServerVersion(ctx, binDir)
	return v.Name(), err
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

// DataFormat is the major version: PostgreSQL reads the data directory
// of its own major version only (a minor release reads its major's).
func (s *Server) DataFormat(ctx context.Context) (string, error) {
	v, err := s.BinVersion(ctx)
	if err != nil {
		return "", err
	}
	if v.Major < 10 {
		return "PostgreSQL " + v.String(), nil // 9.6: two parts made the major
	}
	return fmt.Sprintf("PostgreSQL %d", v.Major), nil
}

// BinVersion reports the version of the binaries this server runs.
func (s *Server) BinVersion(ctx context.Context) (ServerVersion, error) {
	bin, err := s.Bin()
	if err != nil {
		return ServerVersion{}, err
	}
	return ReadServerVersion(ctx, bin)
}

// Exists reports whether Init created the cluster already.
func (s *Server) Exists() bool {
	_, err := os.Stat(filepath.Join(s.DataDir(), "PG_VERSION"))
	return err == nil
}

// Create runs initdb in the data directory, with password for ServerUser,
// which it then writes to the password file.
func (o own) Create(ctx context.Context, pw string) error {
	// initdb reads the password from a file the server's user can read,
	// which it has for as long as initdb runs.
	pwfile := filepath.Join(o.Dir, "initdb-pwfile")
	if err := o.Host.WriteOwned(pwfile, []byte(pw+"\n")); err != nil {
		return err
	}
	cmd := o.Command(ctx, "initdb",
		"-D", o.DataDir(),
		"--auth=scram-sha-256",
		"--pwfile="+pwfile,
		"-U", ServerUser,
		"--encoding=UTF8",
		"--locale=C",
	)
	out, err := cmd.CombinedOutput()
	os.Remove(pwfile)
	if err != nil {
		return fmt.Errorf("initdb in %s: %v: %s", o.DataDir(), err, server.HeadTail(string(out), 8, 8))
	}
	if err := o.Host.WriteOwned(filepath.Join(o.DataDir(), "pg_hba.conf"), []byte(hba)); err != nil {
		return err
	}
	return atomicfile.Write(o.passPath(), []byte("*:*:*:"+ServerUser+":"+pw+"\n"), 0o600)
}

// hba asks every role for its password (scram-sha-256), on the socket and
// on 127.0.0.1, where the server listens: no trust lines, no replication.
// Only ServerUser has a password to begin with; a role a user creates logs
// in only once given one.
const hba = `# Written by dbrig: every role with its password, no trust, no replication.
local  all  all                scram-sha-256
host   all  all  127.0.0.1/32  scram-sha-256
`

// passPath is the cluster's password file, in libpq's format; a cluster
// made before dbrig set passwords has none, and trusts local connections.
func (s *Server) passPath() string { return filepath.Join(s.Dir, "pgpass") }

// withPassfile adds the password file to a URL's query, when there is one.
func (s *Server) withPassfile(q url.Values) url.Values {
	if _, err := os.Stat(s.passPath()); err == nil {
		q.Set("passfile", s.passPath())
	}
	return q
}

// socketFile is the longest name postgres gives its socket in sockDir.
const socketFile = ".s.PGSQL.65535"

// Prepare refuses a postmaster left running in the data directory, and
// adds the statistics dbrig turns on (withStatsDefaults).
func (o own) Prepare(ctx context.Context, settings map[string]string) (map[string]string, error) {
	// A postmaster left over from an earlier process would make pg_ctl fail
	// and the cleanup after that failure stop it; refuse before touching it.
	o.awaitReaped(ctx)
	if o.postmasterAlive(ctx) {
		return nil, exitcode.Userf("a postgres server is already running in %s: stop it with %s stop -D %s",
			o.DataDir(), filepath.Join(o.Host.Bin, "pg_ctl"), o.DataDir())
	}
	return o.withStatsDefaults(ctx, settings), nil
}

// Owned tells the settings Start sets itself.
func (own) Owned(name string) bool { return serverOwnedSettings[strings.ToLower(name)] }

// Launch starts the server with settings passed as `-c name=value`, and
// returns once it accepts connections. A server that fails to start (a
// rejected setting, say) is reported with its own log lines, as soon as
// the postmaster exits, rather than after a timeout.
func (o own) Launch(ctx context.Context, port int, names []string, settings map[string]string) (bool, error) {
	opts := []string{
		"-c", "listen_addresses=" + strings.Join(append([]string{loopback}, o.peer.listens()...), ","),
		"-c", "port=" + strconv.Itoa(port),
		"-c", "unix_socket_directories=" + o.Live.Socket(),
	}
	opts = append(opts, o.peer.settings()...)
	for _, name := range names {
		opts = append(opts, "-c", name+"="+settings[name])
	}
	return o.pgctlStart(ctx, opts)
}

// pgctlStart runs one `pg_ctl start`; inUse reports that the port was taken.
func (o own) pgctlStart(ctx context.Context, opts []string) (inUse bool, err error) {
	logStart := server.FileSize(o.LogPath())
	quoted := make([]string, len(opts))
	for i, o := range opts {
		quoted[i] = shellQuote(o)
	}
	cmd := o.Command(ctx, "pg_ctl", "start",
		"-D", o.DataDir(),
		"-l", o.LogPath(),
		"-w", "-t", "60",
		"-o", strings.Join(quoted, " "),
	)
	var out []byte
	runErr := o.peer.in(func() (err error) {
		out, err = o.Confined.CombinedOutput(cmd)
		return err
	})
	if runErr == nil {
		return false, nil
	}
	// pg_ctl may have been killed by ctx while the postmaster came up; an
	// immediate stop keeps it from outliving the failed Start.
	o.Kill()
	logTail := server.ReadFrom(o.LogPath(), logStart)
	msg := serverLogExcerpt(logTail)
	if msg == "" {
		msg = server.LastLines(string(out), 4)
	}
	if ctx.Err() != nil {
		return false, fmt.Errorf("starting postgres in %s: %w: %s", o.DataDir(), ctx.Err(), msg)
	}
	return strings.Contains(logTail, "Address already in use"),
		exitcode.Userf("postgres in %s did not start: %s", o.DataDir(), msg)
}

// Kill stops a postmaster that a failed start may have left, at once.
func (o own) Kill() {
	if _, err := os.Stat(filepath.Join(o.DataDir(), "postmaster.pid")); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = o.Command(ctx, "pg_ctl", "stop", "-D", o.DataDir(), "-m", "immediate", "-w", "-t", "20").Run()
}

// Halt shuts the server down with a fast shutdown: sessions are ended,
// and a checkpoint is written, so the next Start needs no recovery.
func (o own) Halt(ctx context.Context) (gone bool, err error) {
	out, err := o.Command(ctx, "pg_ctl", "stop", "-D", o.DataDir(), "-m", "fast", "-w", "-t", "60").CombinedOutput()
	if err == nil {
		return true, nil
	}
	// A server that died on its own is stopped all the same; forgetting
	// it lets a later Start try again. pg_ctl says "server does not shut
	// down" when the postmaster was already gone.
	o.awaitReaped(ctx)
	_, statErr := os.Stat(filepath.Join(o.DataDir(), "postmaster.pid"))
	gone = statErr != nil || !o.postmasterAlive(ctx)
	if gone && statErr == nil {
		return true, fmt.Errorf("stopping postgres in %s: %w: %s", o.DataDir(), server.ErrCrashed, o.CrashReason())
	}
	return gone, fmt.Errorf("stopping postgres in %s: %v: %s", o.DataDir(), err, server.LastLines(string(out), 4))
}

// SocketDir is the directory of the running server's unix socket.
func (s *Server) SocketDir() string { return s.Live.Socket() }

// URL connects to the postgres database over loopback TCP.
func (s *Server) URL() string { return s.URLFor("postgres") }

// URLFor connects to database db over loopback TCP.
func (s *Server) URLFor(db string) string { return s.urlAt(db, s.Port()) }

// URLsAt are the URLs of the postgres database on a server listening at
// port and in the socket directory sockDir.
func (o own) URLsAt(port int, sockDir string) (tcp, unix string) {
	return o.urlAt("postgres", port), o.socketURLAt("postgres", port, sockDir)
}

func (s *Server) urlAt(db string, port int) string {
	q := url.Values{}
	q.Set("sslmode", "disable")
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(ServerUser),
		Host:     net.JoinHostPort(s.peer.addr(), strconv.Itoa(port)),
		Path:     "/" + db,
		RawQuery: s.withPassfile(q).Encode(),
	}
	return u.String()
}

// SocketURLFor connects to database db over the unix socket, which skips
// the TCP stack when a measurement wants that.
func (s *Server) SocketURLFor(db string) string {
	return s.socketURLAt(db, s.Port(), s.SocketDir())
}

func (s *Server) socketURLAt(db string, port int, sockDir string) string {
	q := url.Values{}
	q.Set("host", sockDir)
	q.Set("port", strconv.Itoa(port))
	q.Set("user", ServerUser)
	q.Set("sslmode", "disable")
	u := url.URL{Scheme: "postgres", Path: "/" + db, RawQuery: s.withPassfile(q).Encode()}
	return u.String()
}

// CreateDB creates database name, owned by ServerUser, unless it exists,
// with pg_stat_statements when the server preloads it.
func (s *Server) CreateDB(ctx context.Context, name string) error {
	err := s.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if err != nil && dbtarget.SQLState(err) != duplicateDatabase {
		return err
	}
	return s.createStatements(ctx, name)
}

// duplicateDatabase is the SQLSTATE of CREATE DATABASE for a name in use.
const duplicateDatabase = "42P04"

// DropDB drops database name if it exists, ending any sessions still
// connected to it.
func (s *Server) DropDB(ctx context.Context, name string) error {
	return s.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

// CopyDB creates database name as a copy of template, to which no
// session may be connected.
func (s *Server) CopyDB(ctx context.Context, name, template string) error {
	return s.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{template}.Sanitize())
}

// SealDB refuses new sessions on database name, so that it can be copied
// by CopyDB whenever asked.
func (s *Server) SealDB(ctx context.Context, name string) error {
	return s.admin(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH ALLOW_CONNECTIONS false")
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

// shellQuote: pg_ctl hands -o to /bin/sh, so each option is quoted to
// arrive as one word whatever characters a setting's value holds.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// The default log_line_prefix, "%m [%p] ", repeats nothing a person needs.
var logPrefixRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] `)

var logSeverityRE = regexp.MustCompile(`\b(PANIC|FATAL|ERROR|WARNING|DETAIL|HINT|LOG):  `)

// serverLogExcerpt picks the lines that say why a start failed: anything
// above LOG, its DETAIL and HINT, and LOG lines reporting a failure (a port
// in use is only LOG-level). Routine startup and shutdown lines are left out.
func serverLogExcerpt(log string) string {
	keep := server.Messages(log, logPrefixRE, func(line string) bool {
		m := logSeverityRE.FindStringSubmatch(line)
		return m != nil && (m[1] != "LOG" || strings.Contains(line, "could not"))
	})
	if len(keep) == 0 {
		return server.LastLines(log, 5)
	}
	if len(keep) > 8 {
		keep = keep[len(keep)-8:]
	}
	return strings.Join(keep, "; ")
}

// postmasterInfo is what postmaster.pid says about a running server.
type postmasterInfo struct {
	pid     int
	port    int
	sockDir string
}

// readPostmasterPID reads the lock file: line 1 is the pid, 4 the port, 5
// the first socket directory.
func readPostmasterPID(dataDir string) (postmasterInfo, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return postmasterInfo{}, err
	}
	lines := strings.Split(string(b), "\n")
	var pm postmasterInfo
	if len(lines) < 5 {
		return pm, fmt.Errorf("%s/postmaster.pid: %d lines, want at least 5", dataDir, len(lines))
	}
	if pm.pid, err = strconv.Atoi(strings.TrimSpace(lines[0])); err != nil {
		return pm, fmt.Errorf("%s/postmaster.pid: pid %q", dataDir, lines[0])
	}
	if pm.port, err = strconv.Atoi(strings.TrimSpace(lines[3])); err != nil {
		return pm, fmt.Errorf("%s/postmaster.pid: port %q", dataDir, lines[3])
	}
	pm.sockDir = strings.TrimSpace(lines[4])
	return pm, nil
}

// postmasterAlive asks pg_ctl status, then makes sure the postmaster is
// not a zombie: where PID 1 is slow to reap orphans (some containers and
// VMs), a killed postmaster lingers as a zombie that pg_ctl takes for
// alive.
func (s *Server) postmasterAlive(ctx context.Context) bool {
	if s.Command(ctx, "pg_ctl", "status", "-D", s.DataDir()).Run() != nil {
		return false
	}
	pm, err := readPostmasterPID(s.DataDir())
	return err != nil || !server.IsZombie(pm.pid)
}

// awaitReaped gives a dead postmaster's zombie time to be reaped: while it
// lingers, a new postmaster takes postmaster.pid for a live server's and
// refuses to start.
func (s *Server) awaitReaped(ctx context.Context) {
	pm, err := readPostmasterPID(s.DataDir())
	if err != nil {
		return
	}
	deadline := time.Now().Add(15 * time.Second)
	for server.IsZombie(pm.pid) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
}

// Find is where the postmaster listens, as postmaster.pid says, when it
// runs.
func (o own) Find(ctx context.Context, _ *server.Record) (server.Listening, bool, error) {
	if !o.postmasterAlive(ctx) {
		return server.Listening{}, false, nil
	}
	pm, err := readPostmasterPID(o.DataDir())
	if err != nil {
		return server.Listening{}, false, err
	}
	return server.Listening{PID: pm.pid, Port: pm.port, Socket: pm.sockDir}, true, nil
}

// crashLineRE picks the lines that tell how a server died: its own PANIC
// and FATAL messages, and the postmaster's reports on children it lost.
var crashLineRE = regexp.MustCompile(`\b(PANIC|FATAL):  |terminated by signal|exited with exit code|was terminated|terminating any other active server processes|received immediate shutdown|out of memory`)
