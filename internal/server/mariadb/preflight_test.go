//go:build unix

package mariadb

import (
	"strings"
	"testing"
)

// TestPreflightHugePages: large pages are refused only where the host is
// known to have none reserved.
func TestPreflightHugePages(t *testing.T) {
	points := []map[string]string{{"large_pages": "OFF"}, {"large-pages": "ON"}}
	for _, c := range []struct {
		hugePages int
		refused   bool
	}{{0, true}, {-1, false}, {1200, false}} {
		err := preflight(points, c.hugePages)
		if refused := err != nil; refused != c.refused {
			t.Errorf("%d huge pages: %v, want refused %v", c.hugePages, err, c.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "large_pages=ON needs huge pages reserved") {
			t.Errorf("%d huge pages: %v, want it to say what large_pages needs", c.hugePages, err)
		}
	}
	if err := preflight(points[:1], 0); err != nil {
		t.Errorf("large pages off, no huge pages: %v", err)
	}
}
