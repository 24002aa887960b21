package server

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseMemory(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  string
	}{
		{in: "512MB", want: 512 << 20},
		{in: "2GB", want: 2 << 30},
		{in: "2gb", want: 2 << 30},
		{in: "1.5GiB", want: 3 << 29},
		{in: "300M", want: 300 << 20},
		{in: "1 TB", want: 1 << 40},
		{in: "65536kB", want: 64 << 20},
		{in: "268435456", want: 256 << 20},
		{in: "2 GBs", err: `want a size such as 512MB, 2GB or 1.5GiB, got "2 GBs"`},
		{in: "GB", err: `want a size such as 512MB, 2GB or 1.5GiB, got "GB"`},
		{in: "-1GB", err: `want a size such as 512MB, 2GB or 1.5GiB, got "-1GB"`},
		{in: "1MB", err: "1MB is less than 16MB, too little for a server"},
	} {
		got, err := ParseMemory(c.in)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("ParseMemory(%q) = %d, %v; want error %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", c.in, got, err, c.want)
		case c.err == "":
			if back, err := ParseMemory(FormatMemory(got)); err != nil || back != got {
				t.Errorf("FormatMemory(%d) = %s reads back as %d, %v", got, FormatMemory(got), back, err)
			}
		}
	}
	for n, want := range map[int64]string{2 << 30: "2GB", 1536 << 20: "1536MB", 1 << 40: "1TB", 100<<20 + 1<<10: "102401KB"} {
		if got := FormatMemory(n); got != want {
			t.Errorf("FormatMemory(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestParseCPUs(t *testing.T) {
	online := filepath.Join(t.TempDir(), "online")
	if err := os.WriteFile(online, []byte("0-3,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	was := onlinePath
	onlinePath = online
	t.Cleanup(func() { onlinePath = was })
	for _, c := range []struct{ in, want, err string }{
		{in: "0", want: "0"},
		{in: "0-1", want: "0-1"},
		{in: "2,0", want: "0,2"},
		{in: "0,1,2,6", want: "0-2,6"},
		{in: " 1 - 3 ", err: `want a CPU list such as 0, 0-1 or 0,2, got " 1 - 3 "`},
		{in: "3-1", err: `want a CPU list such as 0, 0-1 or 0,2, got "3-1"`},
		{in: "a", err: `want a CPU list such as 0, 0-1 or 0,2, got "a"`},
		{in: "", err: `want a CPU list such as 0, 0-1 or 0,2, got ""`},
		{in: "4", err: "CPU 4 is not online (online: 0-3,6)"},
		{in: "5-6", err: "CPU 5 is not online (online: 0-3,6)"},
	} {
		got, err := ParseCPUs(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ParseCPUs(%q) = %q, %v; want error %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseCPUs(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	c, err := ParseConfinement("2GB", "1")
	if err != nil || c != (Confinement{Memory: 2 << 30, CPUs: "1"}) || c.String() != "memory 2GB, cpus 1" {
		t.Errorf("ParseConfinement(2GB, 1) = %+v (%s), %v", c, c, err)
	}
	if _, err := ParseConfinement("", "9"); err == nil || err.Error() != "cpus: CPU 9 is not online (online: 0-3,6)" {
		t.Errorf("ParseConfinement with an offline CPU: %v", err)
	}
}
