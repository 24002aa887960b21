//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/server/postgres"
)

// bouncerPoint runs sh once more through pgbouncer in transaction pooling
// mode, with pgx's default_query_exec_mode=exec, which dbrig's postgres
// target honors by preparing no named statements (named statements
// would meet another server connection than the one that prepared
// them). Without pgbouncer's binary, or when the run fails, it says so
// in one line and the benchmark goes on.
func (b *bench) bouncerPoint(ctx context.Context, sh shape) (Point, bool) {
	bin := postgres.FindBouncer()
	if bin == "" {
		fmt.Println("\npgbouncer: no pgbouncer binary on PATH or in /usr/sbin (Debian's package pgbouncer): the run through it is skipped")
		return Point{}, false
	}
	url, err := b.database(ctx, sh.warehouses)
	if err != nil {
		return b.failed(sh, err), true
	}
	stop, via, err := b.startBouncer(ctx, bin, url, sh.sessions)
	if err != nil {
		return b.failed(sh, err), true
	}
	defer stop()
	p, err := b.point(ctx, sh, 0, via)
	if err != nil {
		return b.failed(sh, err), true
	}
	return p, true
}

// failed is a point through pgbouncer that failed, said in one line.
func (b *bench) failed(sh shape, err error) Point {
	p := Point{Terminals: sh.terminals, Sessions: sh.sessions, Warehouses: sh.warehouses, Through: "pgbouncer",
		Rampup: b.o.rampup.String(), Duration: b.o.duration.String(), Failed: human.OneLine(err)}
	fmt.Printf("pgbouncer: the run through it failed: %s\n", p.Failed)
	return p
}

// startBouncer starts pgbouncer in front of the database at dbURL, as the
// server's user (it refuses to run as root), with a pool of sessions
// server connections. It returns how to stop it and dbrig's URL through
// it.
func (b *bench) startBouncer(ctx context.Context, bin, dbURL string, sessions int) (stop func(), via string, err error) {
	dir := filepath.Join(b.dir, "pgbouncer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	ini, err := b.bouncerFiles(dir, port, sessions)
	if err != nil {
		return nil, "", err
	}
	cmd := b.srv.Command(ctx, bin, ini)
	// Its log goes to its stderr: dir is not the server user's to write.
	logf, err := os.Create(filepath.Join(dir, "pgbouncer.log"))
	if err != nil {
		return nil, "", err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, "", err
	}
	stop = func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		logf.Close()
	}
	if err := awaitPort(ctx, port); err != nil {
		stop()
		return nil, "", fmt.Errorf("pgbouncer did not listen (see %s): %w", dir, err)
	}
	fmt.Printf("\npgbouncer: %s, transaction pooling, %d server connections, on 127.0.0.1:%d\n", bin, sessions, port)
	return stop, bouncerURL(dbURL, port), nil
}

// bouncerFiles writes pgbouncer's configuration and its user list,
// owned by the server's user, and returns the configuration's path. The
// user list holds the server's password, as pgbouncer needs it to log
// in there for its clients.
func (b *bench) bouncerFiles(dir string, port, sessions int) (string, error) {
	user, pw, err := serverLogin(filepath.Join(b.srv.Dir, "pgpass"))
	if err != nil {
		return "", err
	}
	bc := postgres.Bouncer{Dir: dir, Port: port, ServerHost: "127.0.0.1", ServerPort: strconv.Itoa(b.srv.Port()),
		User: user, Password: pw, PoolSize: sessions}
	for path, text := range bc.Files() {
		if err := b.srv.Host.WriteOwned(path, []byte(text)); err != nil {
			return "", err
		}
	}
	return bc.Config(), nil
}

// serverLogin reads the user and password of a libpq password file's
// first line.
func serverLogin(path string) (user, pw string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	f := strings.SplitN(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), ":", 5)
	if len(f) != 5 {
		return "", "", errors.New("no login in the server's password file")
	}
	return f[3], f[4], nil
}

// bouncerURL is dbURL at pgbouncer's port, executing statements without
// preparing names.
func bouncerURL(dbURL string, port int) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return dbURL
	}
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	q := u.Query()
	q.Set("default_query_exec_mode", "exec")
	u.RawQuery = q.Encode()
	return u.String()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// awaitPort waits up to 10 s for a listener on port.
func awaitPort(ctx context.Context, port int) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var err error
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		var c net.Conn
		if c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr); err == nil {
			c.Close()
			return nil
		}
	}
	return err
}

// lastLine keeps the last line written to it: what dbrig said as it
// failed, for the failure's one line.
type lastLine struct{ line, partial string }

func (l *lastLine) Write(b []byte) (int, error) {
	lines := strings.Split(l.partial+string(b), "\n")
	l.partial = lines[len(lines)-1]
	for _, s := range lines[:len(lines)-1] {
		if s = strings.TrimSpace(s); s != "" {
			l.line = s
		}
	}
	return len(b), nil
}
