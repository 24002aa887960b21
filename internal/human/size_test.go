package human

import (
	"math"
	"testing"
)

// The report's telemetry tables showed these before Bytes moved here from
// the report (fmtBytes); they must not change.
func TestBytes(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0 B"}, {512.4, "512 B"}, {1023.4, "1,023 B"}, {1023.6, "1,024 B"},
		{1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {1<<20 - 1, "1024.0 KiB"},
		{8 << 20, "8.0 MiB"}, {12.34 * (1 << 20), "12.3 MiB"}, {3 << 29, "1.5 GiB"},
		{5 << 40, "5.0 TiB"}, {1 << 50, "1024.0 TiB"},
		{-2048, "-2.0 KiB"}, {-10, "-10 B"}, {math.NaN(), "— B"}, {math.Inf(1), "+Inf TiB"},
	} {
		if got := Bytes(c.v); got != c.want {
			t.Errorf("Bytes(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// FormatSize spells a size exactly, and ParseSize reads it back.
func TestFormatSize(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {1000, "1000"}, {1024, "1KB"}, {3 << 29, "1536MB"}, {2 << 30, "2GB"}, {1 << 40, "1TB"},
	} {
		got := FormatSize(c.n)
		if got != c.want {
			t.Errorf("FormatSize(%d) = %q, want %q", c.n, got, c.want)
		}
		if back, err := ParseSize(got); err != nil || back != c.n {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", got, back, err, c.n)
		}
	}
}
