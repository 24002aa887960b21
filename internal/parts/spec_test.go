package parts

import (
	"errors"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// TestParseSpec: i/n with 1 ≤ i ≤ n and n ≥ 2; anything else is a user's
// error of one line naming what it wants.
func TestParseSpec(t *testing.T) {
	for s, want := range map[string]driver.Part{"1/2": {Index: 1, Of: 2}, "3/3": {Index: 3, Of: 3}, " 2/16 ": {Index: 2, Of: 16}} {
		if got, err := ParseSpec(s); err != nil || got != want {
			t.Errorf("ParseSpec(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, says := range map[string]string{
		"": "want i/n", "2": "want i/n", "a/3": "want i/n", "2/": "want i/n", "1/2/3": "want i/n",
		"1/1": "a run of one part is a run", "0/3": "i from 1 to 3", "4/3": "i from 1 to 3",
		"-1/3": "i from 1 to 3", "1/0": "n at least 2", "1/-2": "n at least 2",
	} {
		_, err := ParseSpec(s)
		var ue *exitcode.UserError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSpec(%q): %v; want one user's line saying %q", s, err, says)
		}
	}
}
