package postgres

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Bouncer is pgbouncer in transaction pooling mode in front of a server,
// as the tests and the benchmarks run it: on loopback, with
// scram-sha-256 against the server's own login, which it also uses to log
// in to the server, and without its check query, whose SELECT 1 on a
// server connection idle for a while would count in the database's
// transactions.
type Bouncer struct {
	Dir                    string // where its files go
	Port                   int    // it listens on 127.0.0.1:Port
	ServerHost, ServerPort string
	User, Password         string // the server's login
	PoolSize               int    // server connections for each database
}

// Files are pgbouncer's configuration (pgbouncer.ini, the file to start it
// with) and its auth file, by path, for the caller to write as the user
// it runs pgbouncer as. Its log goes to its stderr.
func (b Bouncer) Files() map[string]string {
	users := filepath.Join(b.Dir, "users.txt")
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = scram-sha-256
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 1000
server_check_query =
ignore_startup_parameters = extra_float_digits
`, b.ServerHost, b.ServerPort, b.Port, users, b.PoolSize)
	return map[string]string{
		b.Config(): ini,
		users:      quoted(b.User) + " " + quoted(b.Password) + "\n",
	}
}

// Config is the path of pgbouncer's configuration.
func (b Bouncer) Config() string { return filepath.Join(b.Dir, "pgbouncer.ini") }

// quoted is s as pgbouncer's auth file quotes it: in double quotes, each
// one in it doubled.
func quoted(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// FindBouncer is the pgbouncer binary on PATH or where Debian's package
// puts it; "" if there is none.
func FindBouncer() string {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer"
	}
	return ""
}
