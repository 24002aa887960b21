package experiment_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/experiment"
)

// FuzzParse: no spec makes Parse panic or answer in more than one line,
// and a spec that parses keeps its promises: the matrix has a point for
// each combination, once, every point is compared with one that holds the
// baseline's values, and the spec the sweep document keeps parses back to
// itself. Seeded with the shipped experiments and the tests' specs, good
// and bad.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("../../experiments/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no experiments to seed with (%v)", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, spec := range []string{good, serversSpec, ownBuildsSpec, confinedSpec, followSpec} {
		f.Add([]byte(spec))
	}
	for _, tc := range specErrors {
		f.Add([]byte(tc.yaml))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := experiment.Parse("x.yaml", data)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") {
				t.Fatalf("error in more than one line: %q", msg)
			}
			return
		}
		points := s.Points()
		want := 1
		for _, v := range s.Vary {
			want *= len(v.Values)
		}
		if len(points) != want || want == 0 {
			t.Fatalf("%d points for %d combinations", len(points), want)
		}
		seen := map[string]bool{}
		for i, p := range points {
			key, err := json.Marshal(p.Params)
			if err != nil || seen[string(key)] {
				t.Fatalf("point %s is in the matrix twice (%v)", p.Label(), err)
			}
			seen[string(key)] = true
			b := s.BaselineOf(points, i)
			switch {
			case len(s.Baseline) == 0 && b != -1:
				t.Fatalf("point %s has a baseline, but the spec names none", p.Label())
			case len(s.Baseline) > 0 && b == -1 && !s.IsBaseline(p):
				t.Fatalf("point %s has no baseline to compare with", p.Label())
			case b >= 0 && !s.IsBaseline(points[b]):
				t.Fatalf("point %s is compared with %s, not a baseline", p.Label(), points[b].Label())
			}
		}
		back, err := experiment.Parse("sweep.json", s.JSON())
		if err != nil {
			t.Fatalf("the spec as the sweep keeps it does not parse: %v\n%s", err, s.JSON())
		}
		if string(back.JSON()) != string(s.JSON()) {
			t.Fatalf("the spec changes as the sweep keeps it:\n%s\nvs\n%s", back.JSON(), s.JSON())
		}
	})
}
