package human

import (
	"errors"
	"math"
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
