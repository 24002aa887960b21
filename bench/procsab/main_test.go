//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/bench/internal/harness"
)

// TestLoadSide: a side is the working tree's procs.sql, a file, or a git
// revision of the checkout; each yields the build's proc blocks, New-Order
// among them, and anything else is refused.
func TestLoadSide(t *testing.T) {
	repo, err := harness.FindRepo("")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := loadSide(repo, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.procs) < 5 || !strings.Contains(strings.Join(tree.procs, "\n"), "FUNCTION tprocc_neword(") {
		t.Errorf("working tree: %d blocks, want the five functions", len(tree.procs))
	}
	file := filepath.Join(t.TempDir(), "procs.sql")
	if err := os.WriteFile(file, []byte("-- name: proc:tprocc_neword\nSELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := loadSide(repo, file); err != nil || len(s.procs) != 1 || s.label != file {
		t.Errorf("file: %+v, %v", s, err)
	}
	if _, err := loadSide(repo, "HEAD"); err != nil {
		t.Errorf("revision HEAD: %v", err)
	}
	for _, bad := range []string{"no-such-revision", "--output=/tmp/x"} {
		if _, err := loadSide(repo, bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if err := os.WriteFile(file, []byte("-- name: proc:other\nSELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSide(repo, file); err == nil {
		t.Error("a file without New-Order accepted")
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3 = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median of 4 = %v", m)
	}
}
