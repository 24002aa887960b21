package human

import (
	"fmt"
	"time"
)

// FormatDuration shows a duration the way a person would say a time left:
// "45s", "12m", "2h05m", rounded to the second under a minute and to the
// minute above.
// Each unit is chosen after rounding, so 59.6 s is "1m", not "60s".
func FormatDuration(d time.Duration) string {
	if s := d.Round(time.Second); s < time.Minute {
		return fmt.Sprintf("%ds", int(s.Seconds()))
	}
	d = d.Round(time.Minute)
	if d < time.Hour {
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
