package cli

import (
	"strings"
	"testing"
)

// TestProgressLineIsSafe: the live line keeps its own carriage return and
// writes out any control character in the text it shows.
func TestProgressLineIsSafe(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b, live: true}
	p.update("point buffers=\x1b]0;owned\a1GB\r")
	if want := `` + "\r" + `point buffers=\x1b]0;owned\a1GB\r`; b.String() != want {
		t.Errorf("live line %q, want %q", b.String(), want)
	}
}
