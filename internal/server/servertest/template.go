//go:build unix

package servertest

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Template runs build once per test binary and key, then use, under one
// lock, so that a template is never copied while it is made and no two
// are made at once. A build that fails (build fails tb) is tried again by
// the next test that asks. For what many tests need made the same way:
// they copy it in a fraction of the time and CPU it takes to make, which
// on the 2 CPUs of this machine the tests that time a server's work
// competed for.
func Template(tb testing.TB, key string, build, use func()) {
	tb.Helper()
	templates.Lock()
	defer templates.Unlock()
	if !templates.built[key] {
		build()
		if tb.Failed() {
			tb.FailNow()
		}
		templates.built[key] = true
	}
	use()
}

var templates = struct {
	sync.Mutex
	built map[string]bool
	// files are BuiltFile's, by key.
	files map[string]string
}{built: map[string]bool{}, files: map[string]string{}}

// tempRoot is where BuiltFile keeps its templates: the temporary directory
// as the tests began, since a test may point $TMPDIR at a directory of its
// own, removed when it ends.
var tempRoot = os.TempDir()

// BuiltFile is the path of a file named name in the test's temporary
// directory, a copy of the one build made once per test binary and key
// (an embedded database's, say), which Main removes after the tests.
func BuiltFile(tb testing.TB, key, name string, build func(path string)) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	var tpl string
	Template(tb, "file:"+key, func() {
		dir, err := os.MkdirTemp(tempRoot, "dbrig-template-")
		if err != nil {
			tb.Fatal(err)
		}
		RemoveAtExit(dir)
		tpl = filepath.Join(dir, name)
		templates.files[key] = tpl
		build(tpl)
		// What the build left beside the file (a write-ahead log not yet
		// folded in) would not be copied.
		if m, _ := filepath.Glob(tpl + "?*"); len(m) > 0 {
			tb.Fatalf("servertest: the build left %v beside %s", m, tpl)
		}
	}, func() {
		tpl = templates.files[key]
		if err := copyFile(tpl, path); err != nil {
			tb.Fatalf("servertest: copy %s: %v", tpl, err)
		}
	})
	return path
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
