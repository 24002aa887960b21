package dbtarget_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
	_ "github.com/dbrig/dbrig/internal/dbtarget/mariadb"
	_ "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
)

// TestURLPrecedence opens URLs with the real kinds registered and tells by
// each kind's own error which one took the URL: scheme prefixes first,
// PostgreSQL's keyword/value form only for what no prefix claims, and
// nothing for forms no kind knows. Nothing here reaches a server: the
// PostgreSQL and MariaDB URLs name a port or a socket where none listens.
func TestURLPrecedence(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no.db")
	const (
		sqliteErr  = "no such file (a build creates it)"
		pgErr      = "cannot connect to"
		mariaErr   = "cannot connect to mariadb://"
		mysqlErr   = "cannot connect to mysql://"
		unknownErr = "not a URL dbrig knows"
	)
	cases := []struct{ url, want string }{
		{"sqlite:" + missing, sqliteErr},
		// Would be a keyword/value DSN but for the scheme.
		{"sqlite:" + missing + "?x=1 host=y", sqliteErr},
		{"postgres://127.0.0.1:1/x", pgErr},
		{"postgresql://127.0.0.1:1/x?sslmode=disable", pgErr},
		{"host=127.0.0.1 port=1 dbname=x", pgErr},
		{"host=127.0.0.1 port=1 password='a b' dbname=x", pgErr},
		{"user:pw@tcp(127.0.0.1:1)/db", unknownErr},
		{"user:pw@tcp(127.0.0.1:1)/db?tls=true", unknownErr},
		{"mysql://user:pw@127.0.0.1:1/db", mysqlErr},
		{"mariadb://user:pw@127.0.0.1:1/db", mariaErr},
		{"mariadb://user:pw@/db?socket=" + filepath.Join(t.TempDir(), "no.sock"), mariaErr},
		// A MariaDB URL that looks like a keyword/value pair is still MariaDB's.
		{"mariadb://127.0.0.1:1/db?x=1 host=y", "mariadb://"},
		{"./x.db", unknownErr},
		{"", unknownErr},
	}
	for _, c := range cases {
		tg, err := dbtarget.OpenExisting(context.Background(), c.url)
		if err == nil {
			tg.Close()
			t.Errorf("%q opened", c.url)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want an error with %q", c.url, err, c.want)
		}
	}
}

// TestRedactByKind: each kind redacts its own form, and a form no kind
// claims (go-sql-driver's own DSN, which no target takes) still hides its
// password, in Redact and in the error that says no kind matched.
func TestRedactByKind(t *testing.T) {
	cases := []struct{ in, want string }{
		{"postgres://bob:secret@db:5432/x", "postgres://bob:xxxxx@db:5432/x"},
		{"postgres://db/x?password=secret&sslmode=disable", "postgres://db/x?password=xxxxx&sslmode=disable"},
		{"host=db password='se cret' user=bob", "host=db password=xxxxx user=bob"},
		// A path holds no secret, however it looks.
		{"sqlite:/tmp/a:b@c.db", "sqlite:/tmp/a:b@c.db"},
		{"user:secret@tcp(127.0.0.1:3306)/db", "user:xxxxx@tcp(127.0.0.1:3306)/db"},
		{"mysql://user:secret@127.0.0.1:3306/db", "mysql://user:xxxxx@127.0.0.1:3306/db"},
		{"mariadb://user:secret@127.0.0.1:3306/db", "mariadb://user:xxxxx@127.0.0.1:3306/db"},
		{"mariadb://user:secret@/db?socket=/run/my.sock", "mariadb://user:xxxxx@/db?socket=/run/my.sock"},
		// What FuzzRedact found: a keyword/value DSN holding "://", and
		// unescaped passwords that end a URL's host early.
		{"host=db password='pa/secret://x'", "host=db password=xxxxx"},
		{"postgres://bob:12#secret@db/x", "postgres://bob:xxxxx@db/x"},
		{"postgres://bob:12/secret@db/x", "postgres://bob:xxxxx@db/x"},
		{"postgres://bob:12?secret@db/x", "postgres://bob:xxxxx@db/x"},
		{"postgresql://#/x?password=secret", "postgresql://#/x?password=xxxxx"},
		{"postgres://db/x?sslpassword=secret&sslmode=disable", "postgres://db/x?sslmode=disable&sslpassword=xxxxx"},
	}
	for _, c := range cases {
		if got := dbtarget.Redact(c.in); got != c.want || strings.Contains(got, "secret") {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, dsn := range []string{"user:secret@tcp(127.0.0.1:3306)/db", "user:secret@tcp(127.0.0.1:3306)/db?tls=true"} {
		_, err := dbtarget.Open(context.Background(), dsn)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q): %v; want an error without the password", dsn, err)
		}
	}
}
