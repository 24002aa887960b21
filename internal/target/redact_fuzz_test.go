package target_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/target"
)

// libpqQuote writes a keyword/value DSN's value as libpq reads it back: in
// single quotes, with quotes and backslashes escaped.
func libpqQuote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// forms write a target URL the way a user would for each form dbrig's
// kinds (or RedactAny, for the forms no kind claims) may be handed, each
// with the password escaped as that form's parser expects. The last
// argument is the password as it should appear in the form.
var forms = []func(user, pw, host, db string) string{
	func(user, pw, host, db string) string {
		return "postgres://" + url.UserPassword(user, pw).String() + "@" + host + "/" + url.PathEscape(db)
	},
	func(user, pw, host, db string) string {
		return "postgresql://" + host + "/" + url.PathEscape(db) + "?" + url.Values{"user": {user}, "password": {pw}, "sslmode": {"disable"}}.Encode()
	},
	func(user, pw, host, db string) string {
		return "host=" + libpqQuote(host) + " user=" + libpqQuote(user) + " password=" + libpqQuote(pw) + " dbname=" + libpqQuote(db)
	},
	func(user, pw, host, db string) string {
		return "password = " + libpqQuote(pw) + " host = " + libpqQuote(host)
	},
	func(user, pw, host, db string) string {
		return user + ":" + pw + "@tcp(" + host + ")/" + db
	},
	func(user, pw, host, db string) string {
		return user + ":" + pw + "@tcp(" + host + ")/" + db + "?tls=true"
	},
	func(user, pw, host, db string) string {
		return "mysql://" + url.UserPassword(user, pw).String() + "@" + host + "/" + url.PathEscape(db)
	},
}

// FuzzRedact: whatever the user, password, host and database, and in every
// form, the password does not survive Redact. A password too short to be
// told from the rest of the URL, or one the URL holds anyway, cannot be
// checked and is skipped.
func FuzzRedact(f *testing.F) {
	f.Add("bob", "s3cret", "db:5432", "x", uint8(0))
	f.Add("bob", "se cret", "127.0.0.1", "tpcc", uint8(2))
	f.Add("bob", "s3@cr:et", "127.0.0.1:3306", "x", uint8(4))
	f.Add("", "p@ss/w?rd#", "[::1]:5432", "d b", uint8(6))
	f.Fuzz(func(t *testing.T, user, pw, host, db string, form uint8) {
		write := forms[int(form)%len(forms)]
		u := write(user, pw, host, db)
		got, any := target.Redact(u), target.RedactAny(u)
		for _, secret := range secrets(u, write(user, "", host, db), pw) {
			if strings.Contains(got, secret) {
				t.Errorf("Redact(%q) = %q: the password survives as %q", u, got, secret)
			}
			if strings.Contains(any, secret) {
				t.Errorf("RedactAny(%q) = %q: the password survives as %q", u, any, secret)
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
