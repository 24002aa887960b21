// Package mariadb is the MariaDB target (MySQL's protocol, through
// go-sql-driver/mysql): database/sql sessions shared with the other such
// targets, the server's own counters, and its error classes. The server
// dbrig manages itself is in internal/server/mariadb.
package mariadb

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/dbtarget/sqldb"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/go-sql-driver/mysql"
)

func init() {
	// The driver logs a lost connection to stderr as well as returning it;
	// dbrig says what an error means in its own one line.
	mysql.SetLogger(&mysql.NopLogger{})
	dbtarget.Register(dbtarget.Opener{Kind: Kind, Prefixes: prefixes, Redact: Redact, Prewarms: true, Endpoint: Endpoint,
		Open: func(ctx context.Context, url string, _ bool) (dbtarget.Target, error) { return Open(ctx, url) }})
}

// Kind names the target's implementation.
const Kind = "mariadb"

// prefixes are the URL schemes the target accepts: MariaDB's own name and
// the MySQL protocol's.
var prefixes = []string{"mariadb://", "mysql://"}

// Dialect is MariaDB's SQL, which refines MySQL's: a workload's MySQL
// files serve both, and MariaDB's hold what only MariaDB reads differently.
var Dialect = dbtarget.Dialect{Name: "mariadb", Base: "mysql"}

// SQLStateUserRollback is the convention for an intended rollback: a
// routine that runs SIGNAL SQLSTATE 'DR001' asks for a rollback the
// workload counts as done.
const SQLStateUserRollback = "DR001"

const defaultPort = "3306"

// Redact hides the password of a mariadb:// or mysql:// URL. A URL whose
// user part the parser did not find (a '/' in the password moves the
// authority's end) still has everything up to its last '@' hidden.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil && strings.Contains(s, "@") {
		return dbtarget.RedactAny(s)
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// config turns a target URL into the driver's configuration:
//
//	mariadb://USER:PASSWORD@HOST[:PORT]/DB[?PARAMS]
//	mariadb://USER:PASSWORD@/DB?socket=/run/mysqld/mysqld.sock
//	mariadb://USER@HOST[:PORT]/DB?passfile=PATH
//	mariadb://USER@HOST1[:PORT1],HOST2[:PORT2],.../DB?passfile=PATH
//
// PARAMS are the driver's own (tls, timeout, ...), except socket, which
// names a unix socket instead of a host, and passfile, a file whose first
// line is the password. The password is the URL's own, else the
// passfile's, else $MYSQL_PWD (the MySQL clients' variable): a password
// kept out of the URL never shows in a process list. A URL of several
// hosts names the nodes of a cluster that all take writes: addrs are
// their addresses, and cfg reaches the first.
func config(s string) (cfg *mysql.Config, addrs []string, err error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, nil, errors.New("not a URL: give mariadb://USER:PASSWORD@HOST:PORT/DB, with a '/', '?' or '#' in the password percent-encoded")
	}
	if u.User == nil && strings.Contains(s, "@") {
		return nil, nil, errors.New("cannot tell the user part from the host: percent-encode a '/' or '?' in the password (%2F, %3F)")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, nil, errors.New("name one database: mariadb://USER:PASSWORD@HOST:PORT/DB")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, nil, errors.New(human.Unbroken(err.Error()))
	}
	socket, passfile := q.Get("socket"), q.Get("passfile")
	q.Del("socket")
	q.Del("passfile")
	// The database is set apart from the DSN: a name holding '?' would
	// end the DSN's database early, and the driver would open another.
	cfg, err = mysql.ParseDSN("/?" + q.Encode())
	if err != nil {
		// The driver quotes the parameter's value as given, line breaks
		// included.
		return nil, nil, errors.New(human.Unbroken(err.Error()))
	}
	cfg.DBName = db
	if err := interpolating(cfg, q.Get("charset")); err != nil {
		return nil, nil, err
	}
	switch {
	case socket != "" && u.Host != "":
		return nil, nil, errors.New("give a host or ?socket=, not both")
	case socket != "":
		cfg.Net, cfg.Addr = "unix", socket
	case u.Host == "":
		return nil, nil, errors.New("give a host (mariadb://USER:PASSWORD@HOST:PORT/DB) or a unix socket (mariadb://USER:PASSWORD@/DB?socket=PATH)")
	default:
		cfg.Net = "tcp"
		for h := range strings.SplitSeq(u.Host, ",") {
			switch host, port, err := net.SplitHostPort(h); {
			case h == "":
				return nil, nil, errors.New("an empty host in the list: give HOST[:PORT],HOST[:PORT],...")
			case err != nil:
				addrs = append(addrs, net.JoinHostPort(strings.Trim(h, "[]"), defaultPort))
			default:
				addrs = append(addrs, net.JoinHostPort(host, cmp.Or(port, defaultPort)))
			}
		}
		cfg.Addr = addrs[0]
	}
	pw, has := u.User.Password()
	switch {
	case has:
	case passfile != "":
		if pw, err = readPassfile(passfile); err != nil {
			return nil, nil, err
		}
	default:
		pw = os.Getenv(PasswordEnv)
	}
	cfg.User, cfg.Passwd = u.User.Username(), pw
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if len(addrs) == 0 {
		addrs = []string{cfg.Addr}
	}
	return cfg, addrs, nil
}

// interpolating sets the sessions up for batches of statements in one
// query (sqldb.DB's MultiStatements), the driver putting the arguments
// into the text: the round trips of a batch are what client-side SQL
// spends its time on. The driver escapes the values it puts in, which is
// safe in the charsets dbrig uses (utf8mb4 by default); it refuses the
// collations of the charsets whose multibyte characters can hold a quote
// or backslash byte, and these are refused here when named by charset.
func interpolating(cfg *mysql.Config, charsets string) error {
	for cs := range strings.SplitSeq(charsets, ",") {
		switch strings.ToLower(strings.TrimSpace(cs)) {
		case "big5", "cp932", "gb2312", "gbk", "gb18030", "sjis":
			return fmt.Errorf("charset %s: sessions put their arguments into the statements' text, which is not safe in that charset; use utf8mb4", human.Unbroken(cs))
		}
	}
	cfg.MultiStatements, cfg.InterpolateParams = true, true
	return nil
}

// PasswordEnv holds the password of a URL that has none and names no
// passfile.
const PasswordEnv = "MYSQL_PWD"

// readPassfile is the first line of the file at path.
func readPassfile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("passfile: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSuffix(line, "\r"), nil
}

var _ dbtarget.Target = (*Target)(nil)

// Target is an opened MariaDB database.
type Target struct {
	cfg      *mysql.Config
	url      string
	secret   string
	db       sqldb.DB
	greeting greeting
	// conns are the connections to the server, for Sever.
	conns dbtarget.Conns
	// name is the program_name of the connections the target opens, by
	// which the telemetry tells the run's sessions from other clients'
	// (names.go); shared says other processes' carry it too (a run in
	// parts). attrs are the URL's own connection attributes.
	name   string
	shared bool
	attrs  string
	// ids are the ids of the connections the target opened.
	ids connIDs
	// nodes are where sessions go: the one server, or each node of a
	// cluster that all take writes.
	nodes nodes
	// isolation is the level every session is set to; "" leaves the
	// server's.
	isolation dbtarget.Isolation
}

var _ dbtarget.Severer = (*Target)(nil)

// Sever closes every connection to the server: the driver reads what is
// left of a result (a procedure's last packet, say) without watching its
// call's context, so a call on a server that went silent would otherwise
// never return.
func (t *Target) Sever() { t.conns.Sever() }

// Open parses url, connects once to prove the target works and sets every
// session up the same way.
func Open(ctx context.Context, rawURL string) (dbtarget.Target, error) {
	cfg, addrs, err := config(rawURL)
	if err != nil {
		return nil, badURL(rawURL, err)
	}
	t := &Target{cfg: cfg, url: Redact(rawURL), secret: cfg.Passwd, attrs: cfg.ConnectionAttributes, nodes: nodes{addrs: addrs}}
	cfg.DialFunc = t.conns.Dial
	t.nameSessions(dbtarget.OwnName(), false)
	localInfile, err := t.sessionSettings(ctx)
	if err != nil {
		return nil, err
	}
	db, err := t.open(cfg)
	if err != nil {
		return nil, err
	}
	// A batch goes as one compound statement: MariaDB then sends the
	// client only the rows of its SELECTs, not a reply to each statement,
	// which the client woke up to read one by one (its CPU per sql-mode
	// transaction fell from 766 to 527 µs).
	t.db = sqldb.DB{SQL: db, Placeholders: sqldb.Positional, BeginWrite: "START TRANSACTION", Class: classify, MultiStatements: true,
		BatchOpen: "BEGIN NOT ATOMIC\n", BatchClose: "END", BatchBegin: "START TRANSACTION"}
	// LOAD DATA loaded a million rows in 3.9 s where multi-row INSERTs
	// took 6.6 s; a server that refuses it gets the INSERTs.
	if localInfile {
		t.db.Bulk = loadData
	}
	if err := t.openPeers(); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		t.Close()
		return nil, t.connectError(err)
	}
	return t, nil
}

// secretOf finds the password in a URL that config refused, so that the
// error about it can still be scrubbed.
func secretOf(s string) string {
	if u, err := url.Parse(s); err == nil {
		pw, _ := u.User.Password()
		return pw
	}
	return ""
}

func (t *Target) open(cfg *mysql.Config) (*sql.DB, error) {
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, exitcode.Userf("target %s: %s", t.url, t.scrub(human.OneLine(err)))
	}
	return sql.OpenDB(idConnector{c, &t.ids}), nil
}

// connectError says why a connection failed: what answered at the
// address, when it was not MariaDB, else the driver's or the server's
// words.
func (t *Target) connectError(err error) error {
	why := t.greeting.reason()
	if why == "" {
		why = t.scrub(human.OneLine(err))
	}
	return exitcode.Userf("cannot connect to %s: %s", t.url, why)
}

func (t *Target) scrub(s string) string { return dbtarget.Scrub(s, t.secret) }

// sessionSettings decides what every session sets when it connects. The
// server's defaults hold, durability above all, except where a benchmark
// needs otherwise: from 11.8, innodb_snapshot_isolation is ON and makes a
// repeatable-read transaction fail with "Record has changed since last
// read" where a lock wait would do, which OLTP benchmarks' transactions do
// not expect; older servers lack the variable and behave as if it were
// OFF. The probe also tells whether the server takes LOAD DATA LOCAL, and
// its connection whether a MariaDB server answered at all (greeting).
func (t *Target) sessionSettings(ctx context.Context) (localInfile bool, err error) {
	first := t.cfg.Clone()
	first.DialFunc = t.greeting.dial(first.Timeout)
	probe, err := t.open(first)
	if err != nil {
		return false, err
	}
	defer probe.Close()
	rows, err := probe.QueryContext(ctx, "SHOW VARIABLES WHERE Variable_name IN ('innodb_snapshot_isolation', 'local_infile', 'version')")
	if err != nil {
		return false, t.connectError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return false, t.connectError(err)
		}
		switch name {
		case "innodb_snapshot_isolation":
			t.cfg.Params[name] = "OFF"
		case "local_infile":
			localInfile = value == "ON"
		case "version":
			if old(value) {
				return false, exitcode.Userf("%s runs MariaDB %s: dbrig's MariaDB SQL needs 10.6 or later (JSON_TABLE)", t.url, value)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return false, t.connectError(err)
	}
	return localInfile, nil
}

// old tells whether a MariaDB version string ("10.11.6-MariaDB-0+deb12u1")
// is older than 10.6, the first with JSON_TABLE; one it cannot read, or
// not MariaDB's, is not.
func old(version string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil || !strings.Contains(version, "MariaDB") {
		return false
	}
	return major < 10 || major == 10 && minor < 6
}

func (t *Target) Kind() string              { return Kind }
func (t *Target) Dialect() dbtarget.Dialect { return Dialect }
func (t *Target) URL() string               { return t.url }
func (t *Target) ParallelWrites() bool      { return true }
func (t *Target) HasRoutines() bool         { return true }

func (t *Target) Version(ctx context.Context) (string, error) {
	var v string
	err := t.anyNode(ctx, func(db *sql.DB) error { return db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v) })
	return v, err
}

// Size is the tables' and indexes' size as InnoDB reports it.
func (t *Target) Size(ctx context.Context) (int64, error) {
	var n int64
	err := t.anyNode(ctx, func(db *sql.DB) error {
		return db.QueryRowContext(ctx,
			"SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE()").Scan(&n)
	})
	return n, err
}

var (
	_ dbtarget.Restartable = (*Target)(nil)
	_ dbtarget.Located     = (*Target)(nil)
)

func (t *Target) Close() error {
	t.closePeers()
	return t.db.SQL.Close()
}

func (t *Target) Classify(err error) dbtarget.ErrClass { return t.db.Classify(err) }

// Server error numbers that classify says something about.
const (
	erLockWaitTimeout  = 1205
	erLockDeadlock     = 1213
	erServerShutdown   = 1053
	erConnectionKilled = 1927
	crServerGoneError  = 2006
	crServerLost       = 2013
)

// classify: deadlocks and lock wait timeouts are worth another try;
// SQLSTATE DR001 is a routine's intended rollback; an error that is not
// the server's, or says the connection or the server is going, means the
// connection is gone.
func classify(err error) dbtarget.ErrClass {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return dbtarget.ErrOther
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch {
		case me.Number == erLockDeadlock || me.Number == erLockWaitTimeout:
			return dbtarget.ErrRetry
		case string(me.SQLState[:]) == SQLStateUserRollback:
			return dbtarget.ErrUserRollback
		case me.Number == erServerShutdown || me.Number == erConnectionKilled ||
			me.Number == crServerGoneError || me.Number == crServerLost:
			return dbtarget.ErrConnLost
		}
		return dbtarget.ErrOther
	}
	var ne net.Error
	if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) {
		return dbtarget.ErrConnLost
	}
	return dbtarget.ErrOther
}
