package dbtarget

import (
	"slices"
	"testing"
)

// TestRunName: a run in parts names its sessions as a server keeps the
// name: printable ASCII, at most 63 bytes, alike in every part.
func TestRunName(t *testing.T) {
	for _, c := range []struct{ run, want string }{
		{"nightly", "dbrig run nightly"},
		{"été\n", "dbrig run ??t???"},
		{string(make([]byte, 80)), "dbrig run " + string(slices.Repeat([]byte{'?'}, 53))},
	} {
		if got := RunName(c.run); got != c.want {
			t.Errorf("RunName(%q) = %q, want %q", c.run, got, c.want)
		}
	}
}
