package human

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// sizeUnits are PostgreSQL's: a kB, MB or GB is 1024 of the one below, so
// that memory: 2GB and shared_buffers=2GB in one spec mean the same size.
// The IEC spellings and the bare letters mean the same; Bytes writes the
// IEC one, which says so to a reader who does not know PostgreSQL's.
var sizeUnits = []struct {
	names []string
	iec   string
	size  int64
}{
	{[]string{"tb", "tib", "t"}, "TiB", 1 << 40},
	{[]string{"gb", "gib", "g"}, "GiB", 1 << 30},
	{[]string{"mb", "mib", "m"}, "MiB", 1 << 20},
	{[]string{"kb", "kib", "k"}, "KiB", 1 << 10},
}

// ParseSize reads a size such as 512MB, 2GB or 1.5GiB; a bare number is
// bytes.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	end := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(t)
	}
	num, unit := t[:end], strings.TrimSpace(t[end:])
	v, err := strconv.ParseFloat(num, 64)
	size := int64(0)
	if unit == "" || unit == "b" {
		size = 1
	}
	for _, u := range sizeUnits {
		if slices.Contains(u.names, unit) {
			size = u.size
		}
	}
	if err != nil || size == 0 || v < 0 {
		return 0, fmt.Errorf("want a size such as 512MB, 2GB or 1.5GiB, got %q", s)
	}
	return int64(v * float64(size)), nil
}

// FormatSize writes bytes in the largest unit that divides them, as
// ParseSize reads it back: 2GB, 1536MB. It is for a size someone wrote (a
// memory limit, kept in a sweep's spec and read again on resume), which it
// spells exactly; a measured size is Bytes'.
func FormatSize(n int64) string {
	for _, u := range sizeUnits {
		if n%u.size == 0 && n >= u.size {
			return strconv.FormatInt(n/u.size, 10) + strings.ToUpper(u.names[0])
		}
	}
	return strconv.FormatInt(n, 10)
}

// Bytes writes a measured size, or a rate or share of one, for a reader:
// in the largest unit it reaches, to a tenth (12.3 MiB), or in bytes with
// thousands separators below a KiB (1,000 B). It rounds, so it is not for
// a size that is read back (FormatSize).
func Bytes(v float64) string {
	for _, u := range sizeUnits {
		if math.Abs(v) >= float64(u.size) {
			return strconv.FormatFloat(v/float64(u.size), 'f', 1, 64) + " " + u.iec
		}
	}
	return Thousands(v) + " B"
}
