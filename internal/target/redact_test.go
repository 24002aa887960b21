package target

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"postgres://bob:s3cret@db:5432/x", "postgres://bob:xxxxx@db:5432/x"},
		{"postgres://bob@db/x", "postgres://bob@db/x"},
		{"postgres://db/x?password=s3cret&sslmode=disable", "postgres://db/x?password=xxxxx&sslmode=disable"},
		{"host=db password=s3cret user=bob", "host=db password=xxxxx user=bob"},
		{"host=db password = 'se cret' user=bob", "host=db password = xxxxx user=bob"},
		{"sqlite:./x.db", "sqlite:./x.db"},
	}
	for _, c := range cases {
		got := Redact(c.in)
		if got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(got, "cret") {
			t.Errorf("Redact(%q) leaks the secret: %q", c.in, got)
		}
	}
}
