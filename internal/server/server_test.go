package server

import (
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	if _, err := Lookup("postgres"); err == nil || !strings.Contains(err.Error(), "need a unix host") {
		t.Errorf("with no kinds registered: %v", err)
	}
	if Default() != "" {
		t.Errorf("default kind %q with none registered", Default())
	}
	Register(Kind{Name: "b", Default: true})
	Register(Kind{Name: "a"})
	t.Cleanup(func() { kinds = map[string]Kind{} })
	if got := strings.Join(Kinds(), ","); got != "a,b" {
		t.Errorf("Kinds() = %s, want a,b", got)
	}
	if Default() != "b" {
		t.Errorf("Default() = %q, want b", Default())
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "both claim to be the default") {
				t.Errorf("a second default kind: panic %v", r)
			}
		}()
		Register(Kind{Name: "c", Default: true})
	}()
	if k, err := Lookup("a"); err != nil || k.Name != "a" {
		t.Errorf("Lookup(a) = %+v, %v", k, err)
	}
	_, err := New("mariadb", t.TempDir(), "")
	if err == nil || err.Error() != `unknown server kind "mariadb" (known: a, b)` {
		t.Errorf("New of an unknown kind: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a kind twice did not panic")
		}
	}()
	Register(Kind{Name: "a"})
}

func TestClosest(t *testing.T) {
	known := []string{"shared_buffers", "work_mem", "maintenance_work_mem", "wal_buffers", "port"}
	for _, c := range []struct{ name, want string }{
		{"shared_bufers", "shared_buffers"},
		{"Shared_Buffer", "shared_buffers"},
		{"work_men", "work_mem"},
		{"maintenance_work_men", "maintenance_work_mem"},
		{"wal_bufers", "wal_buffers"},
		{"prt", "port"},
		{"pt", ""},
		{"jit_expressions", ""},
		{"effective_io_concurrency", ""},
	} {
		if got := Closest(c.name, known); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestHeadTail: a failing setup command's output keeps its first and its
// last lines, and says where lines were left out.
func TestHeadTail(t *testing.T) {
	out := "Installing system tables ...\n\nERROR: 6  Error on delete of '/tmp/#sql-1'\n" +
		"advice 1\nadvice 2\nadvice 3\nsee the bug tracker\n"
	cases := []struct {
		head, tail int
		want       string
	}{
		{2, 1, "Installing system tables ...; ERROR: 6  Error on delete of '/tmp/#sql-1'; ...; see the bug tracker"},
		{0, 2, "advice 3; see the bug tracker"},
		{4, 4, "Installing system tables ...; ERROR: 6  Error on delete of '/tmp/#sql-1'; advice 1; advice 2; advice 3; see the bug tracker"},
	}
	for _, c := range cases {
		if got := HeadTail(out, c.head, c.tail); got != c.want {
			t.Errorf("HeadTail(%d, %d) = %q, want %q", c.head, c.tail, got, c.want)
		}
	}
}
