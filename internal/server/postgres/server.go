//go:build unix

package postgres

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
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
		New:     func(dir, binHint string) server.Server { return &Server{Dir: dir, BinDir: binHint} },
		Attach: func(dir string) (server.Server, error) {
			s, err := Attach(dir)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
	})
}

var _ server.Server = (*Server)(nil)

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
// off (see withStatsDefaults).
type Server struct {
	// Dir holds everything the server writes. Required.
	Dir string
	// BinDir holds postgres, initdb and pg_ctl; see FindBinDir when empty.
	BinDir string
	// RunAs names the OS user the server runs as when dbrig runs as root.
	// Ignored otherwise: without root there is no one else to become.
	RunAs string

	mu       sync.Mutex
	host     server.Host
	live     server.Live
	settings map[string]string // what the running server was started with
	// confined is what Confine set.
	confined server.Confined
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

// Version names the version of the binaries this server runs.
func (s *Server) Version(ctx context.Context) (string, error) {
	v, err := s.BinVersion(ctx)
	return v.Name(), err
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
	bin, err := s.host.Locked(&s.mu, s.resolve)
	if err != nil {
		return ServerVersion{}, err
	}
	return ReadServerVersion(ctx, bin)
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }

// Exists reports whether Init created the cluster already.
func (s *Server) Exists() bool {
	_, err := os.Stat(filepath.Join(s.dataDir(), "PG_VERSION"))
	return err == nil
}

// LogPath is the server's log file; on a failed start its last lines are
// already quoted in the error. Every start appends to it, so it keeps the
// history of the cluster across restarts.
func (s *Server) LogPath() string { return filepath.Join(s.Dir, "server.log") }

// resolve finds the binaries and the user to run as once; both are needed
// by Init and Start alike.
func (s *Server) resolve() error {
	return s.host.Resolve(&s.Dir, s.BinDir, s.RunAs, FindBinDir, "postgres", "postgres")
}

// command builds a command for one of the server binaries, as the
// unprivileged user when there is one. PG* variables are for clients
// (PGDATA, PGPORT, PGOPTIONS...).
func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return s.host.Command(ctx, s.Dir, []string{"PG"}, filepath.Join(s.host.Bin, name), args...)
}

// Init creates the cluster in Dir/data with initdb. It does nothing when a
// cluster is already there, so a sweep can Init once and Start many times.
func (s *Server) Init(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.resolve(); err != nil {
		return err
	}
	if s.Exists() {
		return nil
	}
	// initdb wants an empty directory it owns; making it ourselves lets
	// Dir stay root's while data belongs to the server's user.
	if err := s.host.MakeDataDir(s.Dir, s.dataDir(), "postgres"); err != nil {
		return err
	}
	pw, err := newPassword()
	if err != nil {
		return err
	}
	// initdb reads the password from a file the server's user can read,
	// which it has for as long as initdb runs.
	pwfile := filepath.Join(s.Dir, "initdb-pwfile")
	if err := s.writeOwned(pwfile, pw+"\n"); err != nil {
		return err
	}
	cmd := s.command(ctx, "initdb",
		"-D", s.dataDir(),
		"--auth=scram-sha-256",
		"--pwfile="+pwfile,
		"-U", ServerUser,
		"--encoding=UTF8",
		"--locale=C",
	)
	out, err := cmd.CombinedOutput()
	os.Remove(pwfile)
	if err != nil {
		return fmt.Errorf("initdb in %s: %v: %s", s.dataDir(), err, server.HeadTail(string(out), 8, 8))
	}
	if err := s.writeOwned(filepath.Join(s.dataDir(), "pg_hba.conf"), hba); err != nil {
		return err
	}
	return atomicfile.Write(s.passPath(), []byte("*:*:*:"+ServerUser+":"+pw+"\n"), 0o600)
}

// hba asks every role for its password (scram-sha-256), on the socket and
// on 127.0.0.1, where the server listens: no trust lines, no replication.
// Only ServerUser has a password to begin with; a role a user creates logs
// in only once given one.
const hba = `# Written by dbrig: every role with its password, no trust, no replication.
local  all  all                scram-sha-256
host   all  all  127.0.0.1/32  scram-sha-256
`

// newPassword is a cluster's password: 144 random bits, in characters
// that need no quoting in a passfile or a URL.
func newPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// writeOwned writes a file only the server's user can read.
func (s *Server) writeOwned(path, body string) error {
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return err
	}
	return server.Own(path, s.host.Cred)
}

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

func (s *Server) makeSocketDir() error {
	dir, temp, err := server.MakeSocketDir(s.Dir, socketFile, s.host.Cred)
	if err == nil {
		s.live.Listen(dir, dir, temp)
	}
	return err
}

// Start starts the server with settings passed as `-c name=value`, and
// returns once it accepts connections. A server that fails to start (a
// rejected setting, say) is reported with its own log lines, as soon as
// the postmaster exits, rather than after a timeout.
func (s *Server) Start(ctx context.Context, settings map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live.Running() {
		return fmt.Errorf("postgres server in %s is already running", s.Dir)
	}
	if err := s.resolve(); err != nil {
		return err
	}
	if !s.Exists() {
		return fmt.Errorf("no cluster in %s: call Init first", s.dataDir())
	}
	// A postmaster left over from an earlier process would make pg_ctl fail
	// and the cleanup after that failure stop it; refuse before touching it.
	s.awaitReaped(ctx)
	if s.postmasterAlive(ctx) {
		return exitcode.Userf("a postgres server is already running in %s: stop it with %s stop -D %s",
			s.dataDir(), filepath.Join(s.host.Bin, "pg_ctl"), s.dataDir())
	}
	// A crash nobody acknowledged is superseded by this start: what it
	// logs from now on is not the crashed server's doing.
	if err := s.writeStopped(); err != nil {
		return err
	}
	settings = s.withStatsDefaults(ctx, settings)
	names, err := server.SettingOrder(settings, func(name string) bool { return serverOwnedSettings[strings.ToLower(name)] })
	if err != nil {
		return err
	}
	// pg_ctl appends to the log as the server's user, so it must exist and
	// belong to that user before pg_ctl runs.
	logStart, err := s.host.MakeLog(s.Dir, s.LogPath(), "postgres")
	if err != nil {
		return err
	}
	if err := s.makeSocketDir(); err != nil {
		return err
	}
	if err := s.confined.Create(); err != nil {
		return err
	}

	return server.Launch(ctx, &s.live, &s.confined, func(port int) (bool, error) {
		opts := []string{
			"-c", "listen_addresses=127.0.0.1",
			"-c", "port=" + strconv.Itoa(port),
			"-c", "unix_socket_directories=" + s.live.Socket(),
		}
		for _, name := range names {
			opts = append(opts, "-c", name+"="+settings[name])
		}
		return s.pgctlStart(ctx, opts)
	}, func() error {
		s.settings = maps.Clone(settings)
		return s.writeStarted(ctx, logStart)
	}, s.stopQuietly)
}

// pgctlStart runs one `pg_ctl start`; inUse reports that the port was taken.
func (s *Server) pgctlStart(ctx context.Context, opts []string) (inUse bool, err error) {
	logStart := server.FileSize(s.LogPath())
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
	out, runErr := s.confined.CombinedOutput(cmd)
	if runErr == nil {
		return false, nil
	}
	// pg_ctl may have been killed by ctx while the postmaster came up; an
	// immediate stop keeps it from outliving the failed Start.
	s.stopQuietly()
	logTail := server.ReadFrom(s.LogPath(), logStart)
	msg := serverLogExcerpt(logTail)
	if msg == "" {
		msg = server.LastLines(string(out), 4)
	}
	if ctx.Err() != nil {
		return false, fmt.Errorf("starting postgres in %s: %w: %s", s.dataDir(), ctx.Err(), msg)
	}
	return strings.Contains(logTail, "Address already in use"),
		exitcode.Userf("postgres in %s did not start: %s", s.dataDir(), msg)
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
	if !s.live.Running() {
		return server.AckCrash(s.Dir, func() (bool, error) {
			if err := s.resolve(); err != nil {
				return false, err
			}
			return s.postmasterAlive(ctx), nil
		}, &s.confined)
	}
	out, err := s.command(ctx, "pg_ctl", "stop", "-D", s.dataDir(), "-m", "fast", "-w", "-t", "60").CombinedOutput()
	if err != nil {
		// A server that died on its own is stopped all the same; forgetting
		// it lets a later Start try again. pg_ctl says "server does not
		// shut down" when the postmaster was already gone.
		s.awaitReaped(ctx)
		if _, statErr := os.Stat(filepath.Join(s.dataDir(), "postmaster.pid")); statErr != nil || !s.postmasterAlive(ctx) {
			s.live.Down()
			_ = s.confined.Remove() // the crash is the news; a busy cgroup is reused
			if statErr == nil {
				return fmt.Errorf("stopping postgres in %s: %w: %s", s.dataDir(), server.ErrCrashed, s.crashReason())
			}
		}
		return fmt.Errorf("stopping postgres in %s: %v: %s", s.dataDir(), err, server.LastLines(string(out), 4))
	}
	s.live.Down()
	return errors.Join(s.writeStopped(), s.confined.Remove())
}

// Running reports whether Start succeeded and Stop has not yet run.
func (s *Server) Running() bool { return s.live.Running() }

// Port is the loopback TCP port of the running server, 0 when stopped.
func (s *Server) Port() int { return s.live.Port() }

// SocketDir is the directory of the running server's unix socket.
func (s *Server) SocketDir() string { return s.live.Socket() }

// URL connects to the postgres database over loopback TCP.
func (s *Server) URL() string { return s.URLFor("postgres") }

// URLFor connects to database db over loopback TCP.
func (s *Server) URLFor(db string) string {
	q := url.Values{}
	q.Set("sslmode", "disable")
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(ServerUser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())),
		Path:     "/" + db,
		RawQuery: s.withPassfile(q).Encode(),
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
		return server.LastLines(log, 5)
	}
	if len(keep) > 8 {
		keep = keep[len(keep)-8:]
	}
	return strings.Join(keep, "; ")
}

func (s *Server) writeStarted(ctx context.Context, logOffset int64) error {
	st := s.host.Started(Kind, s.live.Port(), s.live.Socket(), s.settings, logOffset, s.confined.Get())
	if v, err := ReadServerVersion(ctx, s.host.Bin); err == nil {
		st.Version = v.Name()
	}
	if pm, err := readPostmasterPID(s.dataDir()); err == nil {
		st.PID = pm.pid
	}
	return server.WriteState(s.Dir, st)
}

func (s *Server) writeStopped() error { return server.WriteStopped(s.Dir) }

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
	if s.command(ctx, "pg_ctl", "status", "-D", s.dataDir()).Run() != nil {
		return false
	}
	pm, err := readPostmasterPID(s.dataDir())
	return err != nil || !server.IsZombie(pm.pid)
}

// awaitReaped gives a dead postmaster's zombie time to be reaped: while it
// lingers, a new postmaster takes postmaster.pid for a live server's and
// refuses to start.
func (s *Server) awaitReaped(ctx context.Context) {
	pm, err := readPostmasterPID(s.dataDir())
	if err != nil {
		return
	}
	deadline := time.Now().Add(15 * time.Second)
	for server.IsZombie(pm.pid) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
}

// Attach returns the server dbrig manages in dir, as another process left
// it: running or not, with the binaries, user and settings it was started
// with, so that it can be stopped or inspected. The directory must hold a
// cluster.
func Attach(dir string) (*Server, error) {
	abs, st, err := server.Found(dir, func(abs string) bool { return (&Server{Dir: abs}).Exists() },
		"PostgreSQL", "dbrig server start --dir")
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !s.postmasterAlive(ctx) {
		return s, nil
	}
	pm, err := readPostmasterPID(s.dataDir())
	if err != nil {
		return nil, err
	}
	// Start made a socket directory outside Dir when Dir's path was too
	// long; Stop removes it, as it would have in the starting process.
	s.live.Listen(pm.sockDir, pm.sockDir,
		pm.sockDir != filepath.Join(abs, "sock") && strings.HasPrefix(filepath.Base(pm.sockDir), "dbrig-sock-"))
	s.live.Up(pm.port)
	return s, nil
}

// Settings returns the settings the running server was started with (for
// an attached one, what the state file recorded).
func (s *Server) Settings() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.settings))
	for k, v := range s.settings {
		out[k] = v
	}
	return out
}

// Status reports whether the server is running, and if dbrig started it and
// it is gone without a stop, that it crashed and what its log says.
// Status carries the crash until a Stop acknowledges it or a Start
// supersedes it.
func (s *Server) Status(ctx context.Context) (server.Status, error) {
	if _, err := s.host.Locked(&s.mu, s.resolve); err != nil {
		return server.Status{}, err
	}
	version := ""
	if v, err := ReadServerVersion(ctx, s.host.Bin); err == nil {
		version = v.Name()
	}
	st, saved, err := s.host.SavedStatus(s.Dir, version, s.LogPath(), s.Settings())
	if err != nil {
		return st, err
	}
	if s.postmasterAlive(ctx) {
		pm, err := readPostmasterPID(s.dataDir())
		if err != nil {
			return st, err
		}
		found := &Server{Dir: s.Dir}
		found.live.Listen(pm.sockDir, pm.sockDir, false)
		found.live.Up(pm.port)
		st.State, st.PID = server.Running, pm.pid
		st.URL, st.Socket = found.URL(), found.SocketURLFor("postgres")
		st.MemoryCgroup = server.NewCgroup(s.Dir, st.Confinement).Dir("memory")
		return st, nil
	}
	if saved != nil && saved.Running {
		st.State = server.Crashed
		st.Reason = s.crashReason()
	}
	return st, nil
}

// crashReason explains a crash from the state file and the log.
func (s *Server) crashReason() string {
	saved, err := server.ReadState(s.Dir)
	if err != nil {
		return crashReason(server.ReadFrom(s.LogPath(), 0), 0)
	}
	return crashReason(server.ReadFrom(s.LogPath(), saved.LogOffset), saved.PID)
}

// crashLineRE picks the lines that tell how a server died: its own PANIC
// and FATAL messages, and the postmaster's reports on children it lost.
var crashLineRE = regexp.MustCompile(`\b(PANIC|FATAL):  |terminated by signal|exited with exit code|was terminated|terminating any other active server processes|received immediate shutdown|out of memory`)

func crashReason(log string, pid int) string {
	return server.CrashReason(log, logPrefixRE, crashLineRE, "the postmaster", pid)
}
