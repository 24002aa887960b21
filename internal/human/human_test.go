package human

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func TestThousands(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {999.4, "999"}, {999.5, "1,000"}, {72975.4, "72,975"}, {1234567, "1,234,567"},
		{-1234.6, "-1,235"}, {-0.4, "0"}, {math.NaN(), "—"}, {math.Inf(1), "—"},
	} {
		if got := Thousands(c.v); got != c.want {
			t.Errorf("Thousands(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine(errors.New("first\nsecond")); got != "first" {
		t.Errorf("OneLine = %q", got)
	}
	if got := FirstLine("only"); got != "only" {
		t.Errorf("FirstLine = %q", got)
	}
}

func TestUnbroken(t *testing.T) {
	if got, want := Unbroken("a\nb\r\nc"), `a\nb\r\nc`; got != want {
		t.Errorf("Unbroken = %q, want %q", got, want)
	}
}

// TestSafe: what a terminal acts on is written out, the rest is kept.
func TestSafe(t *testing.T) {
	cases := []struct{ in, want string }{
		{"NOPM 72,975 µs ✓", "NOPM 72,975 µs ✓"},
		{"\x1b]0;owned\a\x1b[2J", `\x1b]0;owned\a\x1b[2J`},
		{"ok\rfake", `ok\rfake`},
		{"a\nb\tc", `a\nb\tc`},
		{"csi \u009b2J", `csi \u009b2J`},
		{"abc\u202edef", `abc\u202edef`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
	}
	for _, c := range cases {
		if got := Safe(c.in); got != c.want {
			t.Errorf("Safe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var b strings.Builder
	io.WriteString(SafeWriter(&b), "title \x1b[31mred\n\nend\r\n")
	if want := "title \\x1b[31mred\n\nend\\r\n"; b.String() != want {
		t.Errorf("SafeWriter wrote %q, want %q", b.String(), want)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 sessions", 1: "1 session", 3: "3 sessions"} {
		if got := Count(n, "session"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
