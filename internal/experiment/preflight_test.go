package experiment

import (
	"os"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/target/postgres"
)

func TestPreflightNamesWhatIsMissingAndWhy(t *testing.T) {
	data, err := os.ReadFile("../../experiments/hugepages-aio.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Parse("hugepages-aio.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	pg15 := postgres.ServerVersion{Major: 15, Minor: 18}
	pg18 := postgres.ServerVersion{Major: 18, Minor: 1}
	noHuge := "MemTotal: 1 kB\nHugePages_Total:       0\n"
	huge := "HugePages_Total:    1200\n"
	uring := "'--prefix=/usr' '--with-liburing' '--with-openssl'"
	plain := "'--prefix=/usr' '--without-icu'"
	cases := []struct {
		name      string
		v         postgres.ServerVersion
		configure string
		meminfo   string
		want      []string // substrings; none means it must pass
	}{
		{"both missing", pg15, uring, noHuge, []string{"io_method needs PostgreSQL 18", "15.18", "huge_pages=on needs huge pages", "vm.nr_hugepages"}},
		{"old server only", pg15, uring, huge, []string{"io_method needs PostgreSQL 18"}},
		{"no huge pages only", pg18, uring, noHuge, []string{"HugePages_Total: 0"}},
		{"no liburing", pg18, plain, huge, []string{"io_method=io_uring needs a PostgreSQL built --with-liburing"}},
		{"all there", pg18, uring, huge, nil},
		{"pg_config and meminfo unreadable", pg18, "", "", nil},
	}
	for _, c := range cases {
		err := preflight(spec.Points(), spec, c.v, "/pg/bin", c.configure, c.meminfo)
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: passed, want an error", c.name)
			continue
		}
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", c.name, msg, w)
			}
		}
		if strings.Contains(msg, "\n") || strings.Count(msg, "io_method needs") > 1 {
			t.Errorf("%s: want one line naming each problem once: %q", c.name, msg)
		}
	}
}
