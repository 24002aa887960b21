package human

import (
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1400 * time.Millisecond, "1s"},
		{59 * time.Second, "59s"},
		{59*time.Second + 600*time.Millisecond, "1m"},
		{59*time.Minute + 40*time.Second, "1h00m"},
		{time.Minute, "1m"},
		{12*time.Minute + 29*time.Second, "12m"},
		{time.Hour, "1h00m"},
		{2*time.Hour + 4*time.Minute + 31*time.Second, "2h05m"},
		{30 * time.Hour, "30h00m"},
	} {
		if got := FormatDuration(c.d); got != c.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
