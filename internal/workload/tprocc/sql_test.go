package tprocc

import (
	"errors"
	"io/fs"
	"path"
	"regexp"
	"testing"

	"github.com/dbrig/dbrig/internal/workload"
)

// TestSQLFilesOverrideOnly keeps the dialect files to what differs: a
// block that repeats the generic one it overrides is a copy that will drift.
// And every statement uses the one placeholder convention, $N.
func TestSQLFilesOverrideOnly(t *testing.T) {
	question := regexp.MustCompile(`\?\d*`)
	err := fs.WalkDir(sqlFiles, "sql", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		f, err := workload.ReadSQL(sqlFiles, p)
		if err != nil {
			return err
		}
		for name, q := range f {
			if m := question.FindString(q); m != "" {
				t.Errorf("%s: block %s has the placeholder %q; write $N", p, name, m)
			}
		}
		dir, file := path.Split(p)
		if path.Base(dir) == workload.Generic {
			return nil
		}
		generic, err := workload.ReadSQL(sqlFiles, path.Join("sql", workload.Generic, file))
		if errors.Is(err, fs.ErrNotExist) {
			return nil // the dialect alone has this file
		}
		if err != nil {
			return err
		}
		for name, q := range f {
			if generic[name] == q {
				t.Errorf("%s: block %s is the same as in generic/%s", p, name, file)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
