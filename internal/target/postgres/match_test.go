package postgres

import "testing"

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
		if got := Match(c.url); got != c.want {
			t.Errorf("Match(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}
