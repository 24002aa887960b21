package workload

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParseSQL: no file makes the named-block reader panic or answer in
// more than one line. A file that reads has a block for each "-- name:"
// line, keeps every line of SQL in one of them, splits each into
// statements none of which is empty, and reads back the same when its
// blocks are written out again. Seeded with every workload's SQL.
func FuzzParseSQL(f *testing.F) {
	files, err := filepath.Glob("*/sql/*/*.sql")
	shared, _ := filepath.Glob("sql/*/*.sql")
	files = append(files, shared...)
	if err != nil || len(files) == 0 {
		f.Fatalf("no SQL files to seed with (%v)", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, err := parseSQL("f.sql", b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error in more than one line: %q", err)
			}
			return
		}
		names, sql := 0, 0
		for _, line := range strings.Split(string(b), "\n") {
			switch t := strings.TrimSpace(line); {
			case strings.HasPrefix(t, "-- name:"):
				names++
			case t != "" && !strings.HasPrefix(t, "--"):
				sql++
			}
		}
		if names != len(sf) {
			t.Fatalf("%d blocks from %d name lines", len(sf), names)
		}
		kept := 0
		var out strings.Builder
		for _, name := range slices.Sorted(maps.Keys(sf)) {
			for _, line := range strings.Split(sf[name], "\n") {
				if strings.TrimSpace(line) != "" {
					kept++
				}
			}
			for _, st := range sf.Statements(name) {
				if strings.TrimSpace(st) == "" {
					t.Fatalf("block %q has an empty statement: %q", name, sf.Statements(name))
				}
			}
			out.WriteString("-- name: " + name + "\n" + sf[name] + "\n")
		}
		if kept != sql {
			t.Fatalf("%d lines of SQL in the blocks, %d in the file", kept, sql)
		}
		back, err := parseSQL("again.sql", []byte(out.String()))
		if err != nil || !maps.Equal(back, sf) {
			t.Fatalf("the blocks written out read back as %q (%v), not %q", back, err, sf)
		}
	})
}
