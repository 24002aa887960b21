package dbtarget_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// libpqQuote writes a keyword/value DSN's value as libpq reads it back: in
// single quotes, with quotes and backslashes escaped.
func libpqQuote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// forms write a target URL as a user would in each form dbrig may be
// handed, the password escaped as that form's parser expects, and name the
// kind that must claim it. The Go MySQL driver's own DSN names none: no
// kind claims it, and RedactAny hides its password.
var forms = []struct {
	kind  string
	write func(user, pw, host, db string) string
}{
	{"postgres", func(user, pw, host, db string) string {
		return "postgres://" + url.UserPassword(user, pw).String() + "@" + host + "/" + url.PathEscape(db)
	}},
	{"postgres", func(user, pw, host, db string) string {
		return "postgresql://" + host + "/" + url.PathEscape(db) + "?" + url.Values{"user": {user}, "password": {pw}, "sslmode": {"disable"}}.Encode()
	}},
	{"postgres", func(user, pw, host, db string) string {
		return "host=" + libpqQuote(host) + " user=" + libpqQuote(user) + " password=" + libpqQuote(pw) + " dbname=" + libpqQuote(db)
	}},
	{"postgres", func(user, pw, host, db string) string {
		return "password = " + libpqQuote(pw) + " host = " + libpqQuote(host)
	}},
	{"", func(user, pw, host, db string) string {
		return user + ":" + pw + "@tcp(" + host + ")/" + db
	}},
	{"", func(user, pw, host, db string) string {
		return user + ":" + pw + "@tcp(" + host + ")/" + db + "?tls=true"
	}},
	{"mariadb", func(user, pw, host, db string) string {
		return "mysql://" + url.UserPassword(user, pw).String() + "@" + host + "/" + url.PathEscape(db)
	}},
	{"mariadb", func(user, pw, host, db string) string {
		return "mariadb://" + url.UserPassword(user, pw).String() + "@" + host + "/" + url.PathEscape(db) + "?tls=true"
	}},
}

// FuzzRedact: whatever the user, password, host and database, each form
// goes to its kind, and its password survives neither Redact nor
// RedactAny. A password too short to be told from the rest of the URL, or
// one the URL holds anyway, cannot be checked and is skipped.
func FuzzRedact(f *testing.F) {
	f.Add("bob", "s3cret", "db:5432", "x", uint8(0))
	f.Add("bob", "se cret", "127.0.0.1", "tpcc", uint8(2))
	f.Add("bob", "s3@cr:et", "127.0.0.1:3306", "x", uint8(4))
	f.Add("", "p@ss/w?rd#", "[::1]:5432", "d b", uint8(6))
	f.Add("bob", "s3/cr?et", "127.0.0.1:3306", "tpcc", uint8(7))
	f.Fuzz(func(t *testing.T, user, pw, host, db string, form uint8) {
		fm := forms[int(form)%len(forms)]
		u := fm.write(user, pw, host, db)
		if kind := dbtarget.KindOf(u); fm.kind != "" && kind != fm.kind {
			t.Errorf("%q went to kind %q, not %s", u, kind, fm.kind)
		}
		got, blunt := dbtarget.Redact(u), dbtarget.RedactAny(u)
		// The same URL without a password, redacted: its text may hold
		// the password's by chance, once Redact has escaped it anew
		// (host "\xc000000" written back as "%C000000" holds "000000").
		bare := fm.write(user, "", host, db)
		bareGot, bareBlunt := dbtarget.Redact(bare), dbtarget.RedactAny(bare)
		for _, secret := range secrets(u, bare, pw) {
			if strings.Contains(got, secret) && !strings.Contains(bareGot, secret) {
				t.Errorf("Redact(%q) = %q: the password survives as %q", u, got, secret)
			}
			if strings.Contains(blunt, secret) && !strings.Contains(bareBlunt, secret) {
				t.Errorf("RedactAny(%q) = %q: the password survives as %q", u, blunt, secret)
			}
		}
	})
}

// secrets are the ways the password pw may show in u, raw or as written in
// u (escaped): the text u has where bare, the same URL without a password,
// has none. Those shorter than 4 bytes, or that bare holds anyway, are left
// out: they cannot be told from the rest of the URL.
func secrets(u, bare, pw string) []string {
	pre := 0
	for pre < len(bare) && u[pre] == bare[pre] {
		pre++
	}
	suf := 0
	for suf < len(bare)-pre && u[len(u)-1-suf] == bare[len(bare)-1-suf] {
		suf++
	}
	var out []string
	for i, s := range []string{pw, u[pre : len(u)-suf]} {
		if len(s) >= 4 && !strings.Contains(bare, s) && (i == 0 || s != pw) {
			out = append(out, s)
		}
	}
	return out
}

// passwordKey is a password=, as RedactAny finds one in any form.
var passwordKey = regexp.MustCompile(`(?i)password\s*=\s*`)

// FuzzRedactString: no string makes the registry's lookup or a redaction
// panic, and whatever the string, a password= left in its redaction is
// followed by the mask or by nothing at all.
func FuzzRedactString(f *testing.F) {
	for _, fm := range forms {
		f.Add(fm.write("bob", "s3cret", "db:5432", "x"))
	}
	f.Add("sqlite:/tmp/a:b@c.db")
	f.Add("postgres://db/x?sslpassword=s3cret&sslmode=disable")
	f.Fuzz(func(t *testing.T, s string) {
		dbtarget.KindOf(s)
		for _, r := range []string{dbtarget.Redact(s), dbtarget.RedactAny(s)} {
			for _, m := range passwordKey.FindAllStringIndex(r, -1) {
				if rest := r[m[1]:]; rest != "" && !strings.HasPrefix(rest, "xxxxx") {
					t.Fatalf("%q redacted as %q keeps a password", s, r)
				}
			}
		}
	})
}
