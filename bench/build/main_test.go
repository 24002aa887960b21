//go:build unix

package main

import (
	"slices"
	"testing"
)

// TestParseCounts: the warehouse counts come smallest first, each once,
// each at least 1; anything else is refused.
func TestParseCounts(t *testing.T) {
	got, err := parseCounts("4, 16,48,100")
	if err != nil || !slices.Equal(got, []int{4, 16, 48, 100}) {
		t.Errorf("4, 16,48,100: %v, %v", got, err)
	}
	for _, bad := range []string{"", "4,x", "0,4", "16,4", "4,4", "-1"} {
		if got, err := parseCounts(bad); err == nil {
			t.Errorf("%q: %v, want an error", bad, got)
		}
	}
}
