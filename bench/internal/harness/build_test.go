//go:build unix

package harness

import "testing"

// TestParseBuild: the benchmarks read the build's phases and its counts
// from the lines the build prints, and say so when there are none.
func TestParseBuild(t *testing.T) {
	out := "Built tproc-c: 2095893 rows, 431 MB in 5.3 s (393019 rows/s)\nPhases: tables 0.01 s, load 3.33 s, keys 0.95 s\n"
	got, err := ParsePhases(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].Name != "load" || got[1].Seconds != 3.33 || got[2].Name != "keys" {
		t.Errorf("phases %+v", got)
	}
	rows, mb, err := parseBuilt(out)
	if err != nil || rows != 2095893 || mb != 431 {
		t.Errorf("built: %d rows, %g MB, %v; want 2095893 and 431", rows, mb, err)
	}
	if _, err := ParsePhases("Built tproc-c\n"); err == nil {
		t.Error("no phases line: no error")
	}
	if _, _, err := parseBuilt("Phases: load 1 s\n"); err == nil {
		t.Error("no Built line: no error")
	}
}
