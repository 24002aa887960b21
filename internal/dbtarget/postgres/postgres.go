// Package postgres is the PostgreSQL target: pgx sessions, COPY loading,
// the database's own counters and the full-cache warm-up. The server dbrig
// manages itself is in internal/server/postgres.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

func init() {
	dbtarget.Register(dbtarget.Opener{Kind: "postgres", Prefixes: prefixes, Match: keywordValue, Redact: Redact, Prewarms: true, Endpoint: Endpoint,
		Open: func(ctx context.Context, url string, _ bool) (dbtarget.Target, error) { return Open(ctx, url) }})
}

// prefixes are the URL schemes libpq accepts.
var prefixes = []string{"postgres://", "postgresql://"}

// Dialect is PostgreSQL's SQL, which no other dialect refines.
var Dialect = dbtarget.Dialect{Name: "postgres"}

// SQLStateUserRollback is the convention for an intended rollback: a
// routine that raises SQLSTATE 'DR001' (a code in no standard class) asks
// for a rollback the workload counts as done, and Classify says
// dbtarget.ErrUserRollback.
const SQLStateUserRollback = "DR001"

// kvDSN is libpq's keyword/value form: keyword = value pairs separated by
// blanks, a value either bare or in single quotes with backslash escapes.
// Requiring every word to be such a pair keeps it from claiming other
// kinds' DSNs that merely contain '=' ("user:pw@tcp(host)/db?tls=true").
var kvDSN = func() *regexp.Regexp {
	pair := `[A-Za-z_]+\s*=\s*(?:'(?:[^'\\]|\\.)*'|[^\s']+)`
	return regexp.MustCompile(`^\s*` + pair + `(?:\s+` + pair + `)*\s*$`)
}()

func keywordValue(url string) bool { return kvDSN.MatchString(url) }

// Redact hides the passwords of a postgres:// URL (in its user part, and
// any query parameter whose name holds "password": libpq's password and
// sslpassword) or of a keyword/value DSN. A URL that parses only by
// reading what its writer meant as the password elsewhere (an unescaped
// '#', '/' or '?' in it leaves an '@' after the host, or a fragment), or
// that still says "password" where no parameter took it, gets RedactAny's
// blunter cut instead.
func Redact(s string) string {
	if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) }) {
		return dbtarget.RedactAny(s)
	}
	u, err := url.Parse(s)
	if err != nil || u.Fragment != "" || strings.Contains(u.EscapedPath()+u.RawQuery, "@") {
		return dbtarget.RedactAny(s)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return dbtarget.RedactAny(s)
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	hidden := 0
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			q.Set(k, "xxxxx")
			hidden++
		}
	}
	if hidden > 0 {
		u.RawQuery = q.Encode()
	}
	out := u.String()
	if strings.Count(strings.ToLower(out), "password") > hidden {
		return dbtarget.RedactAny(s)
	}
	return out
}

var _ dbtarget.Target = (*Target)(nil)

// Target is an opened PostgreSQL database.
type Target struct {
	cfg    *pgx.ConnConfig
	url    string
	secret string
	// db is the measured database's name.
	db string
	// ctl runs the harness's own queries (version, counters) so they never
	// share a connection with a virtual user. It connects to the server's
	// maintenance database and names the measured one, so that none of
	// them counts in the measured database's own counters; where the
	// maintenance database refuses the connection, it reads in the
	// measured database, whose counter then holds a transaction or two of
	// its per mark.
	ctl *link
	// flushSQL is what Flush runs: empty before 15, which has no way to
	// publish a backend's statistics on demand.
	flushSQL string
	// flushes counts the transactions Flush has run in the measured
	// database, which Xacts leaves out (and the telemetry's commits).
	flushes atomic.Int64
	// named: sessions prepare their statements under names of their own,
	// unless the URL's default_query_exec_mode (pgx's) asks for a mode
	// that prepares none (see session).
	named bool
	// pooler: a pooler stands between dbrig and the server (see
	// pooledFlush), which the harness's own first connection tells: its
	// process id is not the backend's.
	pooler bool
	// edge is where the sessions' flushes meet behind a pooler.
	edge meeting
	// name is the application_name of the sessions the target opens, by
	// which its telemetry tells them from other clients' (names.go).
	name string
}

var (
	_ dbtarget.Restartable  = (*Target)(nil)
	_ dbtarget.FlushCounter = (*Target)(nil)
)

// Open parses url (PG* environment variables fill what it leaves out),
// connects once to prove the target works, and keeps that connection for
// the harness's own queries.
func Open(ctx context.Context, url string) (dbtarget.Target, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, badURL(url, err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	t := &Target{cfg: cfg, url: Redact(url), secret: cfg.Password,
		named: cfg.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement}
	t.NameSessions(dbtarget.OwnName())
	timeout := cfg.ConnectTimeout
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return dialQuiet(ctx, network, addr)
	}
	own, err := t.link(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var major int
	err = own.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		var pid uint32
		err := c.QueryRow(ctx, "SELECT current_database(), current_setting('server_version_num')::int / 10000, pg_backend_pid()").Scan(&t.db, &major, &pid)
		t.pooler = pid != c.PgConn().PID()
		return err
	})
	if err != nil {
		own.close()
		return nil, err
	}
	if major >= 15 {
		t.flushSQL = flushSQL
	}
	side := cfg.Copy()
	side.Database = maintenanceDB
	if t.ctl, err = t.link(ctx, side); err != nil {
		t.ctl = own
		return t, nil
	}
	// Its start-up and its query count in the measured database: they are
	// published now, not as its backend exits, when a window may be open.
	err = own.do(ctx, t.flush)
	own.close()
	if err != nil {
		t.ctl.close()
		return nil, err
	}
	return t, nil
}

// flushSQL asks the backend to publish its statistics as it goes idle
// after this statement, before it answers (pg_stat_force_next_flush, 15
// and later). It reads a catalog because a backend publishes nothing while
// none of its pending statistics is a table's: it keeps the transactions
// counted of statements that read no table (its start-up, a prepare, this
// very call) until one does.
const flushSQL = "SELECT pg_stat_force_next_flush() FROM pg_database WHERE datname = current_database()"

// flush publishes what c has done to the measured database's counters,
// counting the transaction it runs for it.
func (t *Target) flush(ctx context.Context, c *pgx.Conn) error {
	if t.flushSQL == "" {
		return nil
	}
	if _, err := c.Exec(ctx, t.flushSQL); err != nil {
		return err
	}
	t.flushes.Add(1)
	return nil
}

// Flushes is how many transactions Flush has run in the measured
// database so far, the target's own connection's at Open included.
func (t *Target) Flushes() int64 { return t.flushes.Load() }

// secretOf finds the password in a URL that pgx could not parse, so the
// error about it can still be scrubbed.
func secretOf(url string) string {
	if cfg, err := pgconn.ParseConfig(url); err == nil {
		return cfg.Password
	}
	return ""
}

func (t *Target) connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, exitcode.Userf("cannot connect to %s: %s", t.url, t.scrub(t.connectWhy(err)))
	}
	return c, nil
}

// connectWhy says why a connection failed: the server's error; that the
// address took no connection, or no answer, within the connect timeout;
// that what answered there is not PostgreSQL; else what pgx says.
func (t *Target) connectWhy(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return connectReason(err)
	}
	addr := t.cfg.Host
	if !strings.HasPrefix(addr, "/") {
		addr = net.JoinHostPort(addr, strconv.Itoa(int(t.cfg.Port)))
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("%s did not answer within %s", addr, t.cfg.ConnectTimeout)
	}
	var oe *net.OpError
	if !strings.HasPrefix(addr, "/") && !(errors.As(err, &oe) && oe.Op == "dial") && !speaksPostgres(addr) {
		return addr + " answered, but not as PostgreSQL"
	}
	return connectReason(err)
}

// sslRequest is what a PostgreSQL client may send first: its length (8)
// and the request code 80877103.
var sslRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// speaksPostgres asks addr, on a connection of its own, what only a
// PostgreSQL server answers with one byte, S or N, and nothing more. A
// server of another protocol answers otherwise: a MySQL server greets
// first, an HTTP server replies with text. An address that takes no
// connection, or says nothing, cannot tell, and counts as PostgreSQL.
func speaksPostgres(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return true
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(sslRequest); err != nil {
		return true
	}
	b := make([]byte, 256)
	n, _ := c.Read(b)
	switch {
	case n == 0:
		return true
	case n > 1 || b[0] != 'S' && b[0] != 'N':
		return false
	}
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	more, _ := c.Read(b)
	return more == 0
}

// connectReason keeps the part of a pgx connect error that says why. pgx
// puts the user and database on the first line and one line per address
// tried after it; the reason ends the first address's line.
func connectReason(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")"
	}
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	s := strings.TrimSpace(lines[0])
	if len(lines) > 1 {
		s = strings.TrimSpace(lines[1])
	}
	if i := strings.LastIndex(s, ": "); i >= 0 && !strings.HasSuffix(s, ": ") {
		return strings.TrimSpace(s[i+2:])
	}
	return s
}

func (t *Target) scrub(s string) string { return dbtarget.Scrub(s, t.secret) }

func (t *Target) Kind() string              { return "postgres" }
func (t *Target) Dialect() dbtarget.Dialect { return Dialect }
func (t *Target) URL() string               { return t.url }
func (t *Target) ParallelWrites() bool      { return true }
func (t *Target) HasRoutines() bool         { return true }

func (t *Target) Version(ctx context.Context) (string, error) {
	var v string
	err := t.ctl.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, "SHOW server_version").Scan(&v)
	})
	return v, err
}

func (t *Target) Size(ctx context.Context) (int64, error) {
	var n int64
	err := t.ctl.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT pg_database_size($1)", t.db).Scan(&n)
	})
	return n, err
}

// Xacts reads the measured database's counter, not the cluster's, so
// other databases' traffic does not inflate the rate, less the
// transactions Flush ran: those Flush has counted it has also published.
func (t *Target) Xacts(ctx context.Context) (int64, bool, error) {
	var n int64
	flushed := t.flushes.Load()
	err := t.ctl.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx,
			"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1", t.db).Scan(&n)
	})
	return n - flushed, err == nil, err
}

var _ dbtarget.Located = (*Target)(nil)

// ServerAddr is where the server the target's own connection reaches
// listens, as it sees itself (inet_server_addr and inet_server_port), so
// that a proxy or a pooler in front of it does not hide a failover from
// one server to another; on a Unix socket, where neither says anything,
// it is the socket the connection reached.
func (t *Target) ServerAddr(ctx context.Context) (string, error) {
	var addr string
	err := t.ctl.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		var host *string
		var port *int32
		if err := c.QueryRow(ctx, "SELECT host(inet_server_addr()), inet_server_port()").Scan(&host, &port); err != nil {
			return err
		}
		addr = c.PgConn().Conn().RemoteAddr().String()
		if host != nil && port != nil {
			addr = net.JoinHostPort(*host, strconv.Itoa(int(*port)))
		}
		return nil
	})
	return addr, err
}

// Started is when the postmaster started: a crash and restart changes it,
// along with resetting the counters Xacts reads.
func (t *Target) Started(ctx context.Context) (time.Time, error) {
	var at time.Time
	err := t.ctl.do(ctx, func(ctx context.Context, c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT pg_postmaster_start_time()").Scan(&at)
	})
	return at, err
}

// link is a connection of the harness's own, reopened when lost: a server
// restarted mid-run must not cost the run its counters, when the virtual
// users ride it out. mu, a lock that a wait for can give up on, guards c,
// since it is replaced when lost: a read that a silent server holds up must
// not hold another past its own deadline.
type link struct {
	mu       chan struct{}
	c        *pgx.Conn
	connect  func(context.Context) (*pgx.Conn, error)
	classify func(error) dbtarget.ErrClass
	// explain says what to do about an error that can say more.
	explain func(error) error
}

// link connects with cfg and keeps reconnecting with it.
func (t *Target) link(ctx context.Context, cfg *pgx.ConnConfig) (*link, error) {
	l := &link{
		mu:       make(chan struct{}, 1),
		connect:  func(ctx context.Context) (*pgx.Conn, error) { return t.connect(ctx, cfg) },
		classify: t.Classify,
		explain:  t.pooled,
	}
	var err error
	if l.c, err = l.connect(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// do runs q on the connection, reopening it if it was lost.
func (l *link) do(ctx context.Context, q func(context.Context, *pgx.Conn) error) error {
	select {
	case l.mu <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-l.mu }()
	return l.explain(dbtarget.Reconnecting(ctx, l.classify,
		func(ctx context.Context) error {
			c, err := l.connect(ctx)
			if err != nil {
				return err
			}
			l.c.Close(ctx)
			l.c = c
			return nil
		},
		func(ctx context.Context) error { return q(ctx, l.c) }))
}

func (l *link) close() error {
	l.mu <- struct{}{}
	defer func() { <-l.mu }()
	return l.c.Close(context.Background())
}

func (t *Target) Session(ctx context.Context) (dbtarget.Session, error) {
	c, err := t.connect(ctx, t.cfg)
	if err != nil {
		return nil, err
	}
	c.TypeMap().RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: textNumeric{}})
	t.edge.open(1)
	s := &session{t: t, c: c, prepared: map[string]*statement{}, w: &watch{conn: c.PgConn().Conn()}}
	s.call.s = s
	return s, nil
}

// textNumeric has a session's numeric arguments and results go as text.
// In binary, pgx turns a float64 into a numeric, and back, through
// decimal strings and math/big: 7% of the client's CPU in sql mode. As
// text the decimal string is all there is, and the server's own
// numeric_in and numeric_out do the rest. The values are the same either
// way, the shortest decimal that reads back as the float64. COPY still
// sends binary.
type textNumeric struct{ pgtype.NumericCodec }

func (textNumeric) PreferredFormat() int16 { return pgtype.TextFormatCode }

func (t *Target) Close() error { return t.ctl.close() }

// Classify: serialization failures and deadlocks are worth another try;
// a missing row is the transaction's own failure; anything else that is
// not a server-reported error, or is one of the
// connection classes, means the connection is gone; DR001 is a routine's
// intended rollback.
func (t *Target) Classify(err error) dbtarget.ErrClass {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
			errors.Is(err, pgx.ErrNoRows) || errors.Is(err, dbtarget.ErrNoRow) {
			return dbtarget.ErrOther
		}
		return dbtarget.ErrConnLost
	}
	switch {
	case pe.Code == "40001" || pe.Code == "40P01":
		return dbtarget.ErrRetry
	case pe.Code == SQLStateUserRollback:
		return dbtarget.ErrUserRollback
	case strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P"):
		return dbtarget.ErrConnLost
	}
	return dbtarget.ErrOther
}

// session is a virtual user's connection. It prepares each statement
// with arguments once, under a name of its own, instead of leaving it to
// pgx's statement cache: that cache forgets a statement whenever a query
// on it fails, so every intended rollback (an error, by convention) cost
// a DEALLOCATE and a new PREPARE on the statement's next call, and
// extra transactions in the database's own count.
//
// A pooler in transaction mode (pgbouncer before 1.21, or without
// max_prepared_statements) runs each transaction on whichever server
// connection is free, where the names are not. The URL's
// default_query_exec_mode then asks for pgx's statements without names:
// exec (the types from the Go values, one round trip), cache_describe
// (each statement described once), simple_protocol; describe_exec
// describes on one round trip and runs on the next, which may be
// another server connection's.
type session struct {
	t *Target
	c *pgx.Conn
	// prepared holds the statements the session named, by SQL.
	prepared map[string]*statement
	// call, row and rows hold the last query's result: a session runs one
	// query at a time, and holding them here costs no allocation a query.
	call  call
	row   row
	rows  rows
	brows batchRows
	// closed: Close has left the sessions that meet at an edge.
	closed bool
	// w watches the context of the session's calls, which go to pgx
	// unwatched.
	w *watch
}

// statement is what to run for sql, and the context to give pgx for a
// call made with ctx (see watch): the statement sql was prepared as, or
// nil to run the SQL itself, when it has no arguments (pgx then uses the
// simple protocol, which cannot carry any) or the session names no
// statements.
func (s *session) statement(ctx context.Context, sql string, args []any) (context.Context, *statement, error) {
	pctx, err := s.w.context(ctx)
	if err != nil || len(args) == 0 || !s.t.named {
		return pctx, nil, err
	}
	st, err := s.prepare(ctx, sql)
	return pctx, st, s.t.pooled(err)
}

// prepare is the statement sql was prepared as on this session, under a
// name of the session's, preparing it the first time.
func (s *session) prepare(ctx context.Context, sql string) (*statement, error) {
	if st, ok := s.prepared[sql]; ok {
		return st, nil
	}
	sd, err := s.c.Prepare(ctx, fmt.Sprintf("dbrig_%d", len(s.prepared)+1), sql)
	if err != nil {
		return nil, err
	}
	st := &statement{sd: sd, results: make([]int16, len(sd.Fields))}
	for i, f := range sd.Fields {
		st.results[i] = s.c.TypeMap().FormatCodeForOID(f.DataTypeOID)
	}
	s.prepared[sql] = st
	return st, nil
}

// named is what to give pgx to run sql: the name st was prepared under,
// or sql itself where st is nil.
func named(sql string, st *statement) string {
	if st == nil {
		return sql
	}
	return st.sd.Name
}

var (
	_ dbtarget.Preparer = (*session)(nil)
	_ dbtarget.Flusher  = (*session)(nil)
)

// Flush publishes the session's statistics. Before 15 there is no way to:
// a backend sends them at most twice a second as its transactions end,
// and what it did last waits for its next transaction, so the counters
// read at a window's edge miss up to half a second of each session's
// transactions, and a session's start-up until its first transaction.
func (s *session) Flush(ctx context.Context) error {
	s.w.unwatched()
	if s.t.pooler {
		return s.pooledFlush(ctx)
	}
	return s.t.flush(ctx, s.c)
}

// Prepare prepares each of sqls now, as their first use would, where the
// session names its statements.
func (s *session) Prepare(ctx context.Context, sqls ...string) error {
	if !s.t.named {
		return nil
	}
	for _, sql := range sqls {
		if _, err := s.prepare(ctx, sql); err != nil {
			return s.t.pooled(err)
		}
	}
	return nil
}

func (s *session) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	pctx, st, err := s.statement(ctx, sql, args)
	if err != nil {
		return 0, err
	}
	tag, err := s.c.Exec(pctx, named(sql, st), args...)
	return tag.RowsAffected(), s.t.pooled(s.w.why(err))
}

func (s *session) QueryRow(ctx context.Context, sql string, args ...any) dbtarget.Row {
	pctx, st, err := s.statement(ctx, sql, args)
	switch {
	case err != nil:
		return dbtarget.ErrRow{Err: err}
	case st != nil:
		s.call.start(pctx, st, args)
		return &s.call
	}
	s.row = row{Row: s.c.QueryRow(pctx, sql, args...), s: s}
	return &s.row
}

func (s *session) Query(ctx context.Context, sql string, args ...any) (dbtarget.Rows, error) {
	pctx, st, err := s.statement(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	r, err := s.c.Query(pctx, named(sql, st), args...)
	if err != nil {
		return nil, s.t.pooled(s.w.why(err))
	}
	s.rows = rows{Rows: r, s: s}
	return &s.rows, nil
}

func (s *session) Load(ctx context.Context, table string, columns []string, src dbtarget.RowSource) (int64, error) {
	n, err := s.copyIn(ctx, table, columns, src)
	if err != nil {
		return n, fmt.Errorf("copy into %s: %w", table, err)
	}
	return n, nil
}

func (s *session) Close() error {
	if !s.closed {
		s.closed = true
		s.t.edge.open(-1)
		s.w.close()
	}
	return s.c.Close(context.Background())
}
