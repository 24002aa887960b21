package dbtarget

import (
	"strings"
	"testing"
)

func TestRedactAny(t *testing.T) {
	cases := []struct{ in, want string }{
		{"user:s3cret@tcp(127.0.0.1:3306)/db", "user:xxxxx@tcp(127.0.0.1:3306)/db"},
		{"user:s3cret@tcp(127.0.0.1:3306)/db?tls=true", "user:xxxxx@tcp(127.0.0.1:3306)/db?tls=true"},
		{"mysql://bob:s3cret@db:3306/x", "mysql://bob:xxxxx@db:3306/x"},
		{"mysql://bob:s3@cret@db/x", "mysql://bob:xxxxx@db/x"},
		{"mysql://bob@db/x", "mysql://bob@db/x"},
		{"x://db/x?password=s3cret&sslmode=disable", "x://db/x?password=xxxxx"},
		{"host=db password=s3cret user=bob", "host=db password=xxxxx user=bob"},
		{"host=db password = 'se cret' user=bob", "host=db password = xxxxx user=bob"},
		{"sqlite:./x.db", "sqlite:./x.db"},
		// A "://" in the password is no scheme's end.
		{"user:s3://cret@tcp(127.0.0.1:3306)/db", "user:xxxxx@tcp(127.0.0.1:3306)/db"},
		// An '@' in a quoted password cannot move the cut.
		{"host='a:b' password='x@ycret' dbname=d", "host='a:b' password=xxxxx dbname=d"},
		// Nor can a value that ends in password=.
		{"user='xpassword=' password='s3cret' dbname=d", "user='xpassword=xxxxx password=xxxxx dbname=d"},
	}
	for _, c := range cases {
		got := RedactAny(c.in)
		if got != c.want {
			t.Errorf("RedactAny(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(got, "cret") {
			t.Errorf("RedactAny(%q) leaks the secret: %q", c.in, got)
		}
	}
}
