package mariadb

import (
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// TestConfig: the URL forms the target takes, and what each becomes.
func TestConfig(t *testing.T) {
	cases := []struct {
		url, net, addr, user, pw, db string
	}{
		{"mariadb://bob:pw@db:3307/x", "tcp", "db:3307", "bob", "pw", "x"},
		{"mysql://bob:pw@db/x", "tcp", "db:3306", "bob", "pw", "x"},
		{"mariadb://bob@[::1]/x", "tcp", "[::1]:3306", "bob", "", "x"},
		{"mariadb://bob:p%40w%2F%3F@db/x?timeout=5s", "tcp", "db:3306", "bob", "p@w/?", "x"},
		{"mariadb://bob:pw@/x?socket=/run/mysqld/mysqld.sock", "unix", "/run/mysqld/mysqld.sock", "bob", "pw", "x"},
		// An '@' in the password needs no escape: the last one ends the user part.
		{"mariadb://bob:p@w@db/x", "tcp", "db:3306", "bob", "p@w", "x"},
		// A '?' in the database's name, escaped, stays in it (FuzzConfig).
		{"mariadb://bob:pw@db/a%3Fb?timeout=5s", "tcp", "db:3306", "bob", "pw", "a?b"},
	}
	for _, c := range cases {
		cfg, _, err := config(c.url)
		if err != nil {
			t.Errorf("config(%q): %v", c.url, err)
			continue
		}
		if cfg.Net != c.net || cfg.Addr != c.addr || cfg.User != c.user || cfg.Passwd != c.pw || cfg.DBName != c.db {
			t.Errorf("config(%q) = %s %s %s %q %s, want %s %s %s %q %s", c.url,
				cfg.Net, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName, c.net, c.addr, c.user, c.pw, c.db)
		}
	}
	bad := []string{
		"mariadb://bob:pw@db",                // no database
		"mariadb://bob:pw@db/x/y",            // two
		"mariadb://bob:pw@/x",                // no host, no socket
		"mariadb://bob:pw@db/x?socket=/s",    // both
		"mariadb://bob:s3/cret@db/x",         // an unescaped '/' in the password
		"mariadb://bob:pw@db/x?timeout=fast", // the driver's own parameter, wrong
		"mariadb://bob:pw@db:port/x",         // not a port
		"mariadb://bob:pw@db/x?%zz",          // not a query
		// Batches interpolate their arguments, unsafe in these charsets.
		"mariadb://bob:pw@db/x?charset=gbk",
		"mariadb://bob:pw@db/x?charset=utf8mb4,SJIS",
	}
	for _, u := range bad {
		if _, _, err := config(u); err == nil {
			t.Errorf("config(%q) accepted it", u)
		}
	}
}

// TestConfigNodes: a URL of several hosts names a cluster's nodes, each
// with its port or the default, the first the one the config reaches.
func TestConfigNodes(t *testing.T) {
	cfg, addrs, err := config("mariadb://bob@10.0.0.1:3307,db2,db3:3309/x")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.1:3307", "db2:3306", "db3:3309"}
	if strings.Join(addrs, " ") != strings.Join(want, " ") || cfg.Addr != want[0] {
		t.Errorf("addrs %q, config at %s; want %q, at the first", addrs, cfg.Addr, want)
	}
	if _, _, err := config("mariadb://bob@db1,,db3/x"); err == nil || !strings.Contains(err.Error(), "empty host") {
		t.Errorf("an empty host in the list: %v, want it refused", err)
	}
	if _, addrs, _ := config("mariadb://bob@db/x"); len(addrs) != 1 || addrs[0] != "db:3306" {
		t.Errorf("one host: addrs %q, want its own", addrs)
	}
}

// TestConfigPassword: a password the URL does not hold comes from its
// passfile, else from $MYSQL_PWD; the URL's own wins over both, and a
// passfile wins over the environment. Neither the passfile's name nor its
// password reaches the driver as a session variable.
func TestConfigPassword(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	if err := os.WriteFile(file, []byte("fromfile\r\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pf := "passfile=" + url.QueryEscape(file)
	t.Setenv(PasswordEnv, "fromenv")
	cases := []struct{ url, pw string }{
		{"mariadb://bob@db/x?" + pf, "fromfile"},
		{"mariadb://bob@/x?socket=/s&" + pf, "fromfile"},
		{"mariadb://bob@db/x", "fromenv"},
		{"mariadb://bob:own@db/x?" + pf, "own"},
		{"mariadb://bob:@db/x", ""}, // an empty password, given
		{"mariadb://db/x?" + pf, "fromfile"},
	}
	for _, c := range cases {
		cfg, _, err := config(c.url)
		if err != nil {
			t.Errorf("config(%q): %v", c.url, err)
			continue
		}
		if cfg.Passwd != c.pw {
			t.Errorf("config(%q): password %q, want %q", c.url, cfg.Passwd, c.pw)
		}
		if _, ok := cfg.Params["passfile"]; ok {
			t.Errorf("config(%q) passes passfile to the server as a variable", c.url)
		}
	}
	missing := "mariadb://bob@db/x?passfile=" + url.QueryEscape(filepath.Join(dir, "none"))
	if _, _, err := config(missing); err == nil || !strings.Contains(err.Error(), "passfile") {
		t.Errorf("config(%q) = %v, want an error about the passfile", missing, err)
	}
	if got := dbtarget.Redact("mariadb://bob@db/x?" + pf); got != "mariadb://bob@db/x?"+pf {
		t.Errorf("Redact changed a URL that holds no secret: %q", got)
	}
}

// TestRedact: the password is hidden in every form the target takes, and
// in the odd ones it refuses, whatever characters it holds.
func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"mariadb://bob:s3cret@db:3306/x", "mariadb://bob:xxxxx@db:3306/x"},
		{"mysql://bob:s3cret@db/x?tls=true", "mysql://bob:xxxxx@db/x?tls=true"},
		{"mariadb://bob:s3cret@/x?socket=/run/a.sock", "mariadb://bob:xxxxx@/x?socket=/run/a.sock"},
		{"mariadb://bob:s3@cret@db/x", "mariadb://bob:xxxxx@db/x"},
		{"mariadb://bob:s3/cret@db/x", "mariadb://bob:xxxxx@db/x"},
		{"mariadb://bob:1/cret@db/x", "mariadb://bob:xxxxx@db/x"},
		{"mariadb://bob:s3%2Fcret@db/x", "mariadb://bob:xxxxx@db/x"},
		{"mariadb://bob@db/x", "mariadb://bob@db/x"},
		{"mariadb://db/x", "mariadb://db/x"},
	}
	for _, c := range cases {
		if got := dbtarget.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRedactOddPasswords builds URLs around random passwords, written
// raw and percent-encoded, and checks that no redaction lets one through
// and that the encoded form still reaches the driver intact.
func TestRedactOddPasswords(t *testing.T) {
	const alphabet = "abcXYZ019@:/?#%&=+ !$'()*,;[]~\\\"`^{}|<>"
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, 4+r.IntN(10))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		pw := "Q" + string(b) + "Z" // a secret nothing else in the URL contains
		for _, tail := range []string{"@db:3306/x", "@db/x?tls=true", "@/x?socket=/run/a.sock"} {
			encoded := "mariadb://bob:" + url.PathEscape(pw) + tail
			if got := dbtarget.Redact(encoded); strings.Contains(got, pw) || strings.Contains(got, url.PathEscape(pw)) {
				t.Fatalf("Redact(%q) = %q leaks the password", encoded, got)
			}
			cfg, _, err := config(encoded)
			if err != nil || cfg.Passwd != pw {
				t.Fatalf("config(%q): password %q, %v; want %q", encoded, cfg.Passwd, err, pw)
			}
			raw := "mysql://bob:" + pw + tail
			if got := dbtarget.Redact(raw); strings.Contains(got, pw) {
				t.Fatalf("Redact(%q) = %q leaks the password", raw, got)
			}
		}
	}
}

// TestOld: a server older than 10.6 (no JSON_TABLE) is refused at open;
// MariaDB's own version strings, and ones that cannot be read, are not.
func TestOld(t *testing.T) {
	for v, want := range map[string]bool{
		"10.11.6-MariaDB-0+deb12u1": false,
		"10.6.0-MariaDB":            false,
		"11.4.2-MariaDB-log":        false,
		"10.5.23-MariaDB":           true,
		"10.1.48-MariaDB":           true,
		"5.5.68-MariaDB":            true,
		"unknown":                   false,
		"8.0.36":                    false,
	} {
		if got := old(v); got != want {
			t.Errorf("old(%q) = %v, want %v", v, got, want)
		}
	}
}
