package mariadb

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzConfig: no target URL makes config panic, its error is one line
// and never holds the password, and a URL written from a user, a
// password, a host and a database, each escaped as a URL needs, reaches
// the driver as those same four: never as another database, or with
// part of the password taken for the host.
func FuzzConfig(f *testing.F) {
	f.Add("bob", "s3cret", "db:3307", "x", "timeout=5s")
	f.Add("bob", "p@w/?#", "[::1]", "tpcc", "tls=true")
	f.Add("bob", "s3cret", "", "x", "socket=/run/mysqld/mysqld.sock")
	f.Add("bob", "", "db", "x", "passfile=%2Fnonexistent%2Fdbrig-secret")
	f.Fuzz(func(t *testing.T, user, pw, host, db, query string) {
		if strings.ContainsAny(host, "@/?#") {
			return // not a host: the URL would say something else
		}
		u := "mariadb://" + url.UserPassword(user, pw).String() + "@" + host + "/" + url.PathEscape(db)
		if query != "" {
			u += "?" + query
		}
		cfg, _, err := config(u)
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Fatalf("config(%q): error in more than one line: %q", u, msg)
			}
			if len(pw) >= 4 && strings.Contains(msg, pw) && !strings.Contains(user+host+db+query, pw) {
				t.Fatalf("config(%q): the error shows the password: %q", u, msg)
			}
			return
		}
		if cfg.User != user || cfg.Passwd != pw || cfg.DBName != db {
			t.Fatalf("config(%q) = user %q, password %q, database %q; want %q, %q, %q",
				u, cfg.User, cfg.Passwd, cfg.DBName, user, pw, db)
		}
	})
}
