package postgres

import (
	"testing"

	"github.com/dbrig/dbrig/internal/dbtarget"
)

// TestMatch: the registry gives PostgreSQL its URLs and keyword/value
// DSNs, as libpq takes them, and nothing else.
func TestMatch(t *testing.T) {
	cases := []struct {
		url  string
		want bool
	}{
		{"postgres://bob@db/x", true},
		{"postgresql://db/x?sslmode=disable", true},
		{"host=db dbname=x", true},
		{"dbname=x", true},
		{" host = db  password='a \\' b' user=bob ", true},
		{"sqlite:./x.db", false},
		{"sqlite:host=x", false},
		{"user:pw@tcp(db:3306)/x", false},
		{"user:pw@tcp(db:3306)/x?tls=true", false},
		{"mysql://user:pw@db/x", false},
		{"host=db junk", false},
		{"./x.db", false},
		{"", false},
	}
	for _, c := range cases {
		if got := dbtarget.KindOf(c.url) == "postgres"; got != c.want {
			t.Errorf("KindOf(%q) = %q, want postgres: %v", c.url, dbtarget.KindOf(c.url), c.want)
		}
	}
}
