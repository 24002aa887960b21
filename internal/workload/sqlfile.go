package workload

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// SQLFile is a file of named blocks: a line "-- name: NAME" starts a block
// that runs to the next such line. Other comment lines are dropped; SQL
// before the first block, or in a block without a name, is an error, not
// lost.
type SQLFile map[string]string

// Generic is the directory of the SQL every dialect starts from.
const Generic = "generic"

// LoadSQL reads file for dialect d from a workload's SQL tree under dir,
// BenchBase's way: the blocks of dir/generic/file, each replaced by the
// block of the same name in dir/<base>/file and then in dir/<name>/file.
// A dialect file thus holds only the statements that differ, plus any
// only it has. Any of the three files may be missing, but not all.
//
// A workload runs on the dialects it has a directory for, its own or its
// base's: the generic blocks are what those share, not a dialect of their
// own, so a dialect without one is refused in one line here, before any
// statement is looked for.
func LoadSQL(fsys fs.FS, dir string, d dbtarget.Dialect, file string) (SQLFile, error) {
	layers := []string{Generic}
	for _, l := range []string{d.Base, d.Name} {
		if l != "" && l != Generic {
			layers = append(layers, l)
		}
	}
	if err := runsOn(fsys, dir, layers[1:], d); err != nil {
		return nil, err
	}
	f := SQLFile{}
	found := false
	for _, l := range layers {
		blocks, err := ReadSQL(fsys, path.Join(dir, l, file))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		for name, q := range blocks {
			f[name] = q
		}
	}
	if !found {
		return nil, fmt.Errorf("no %s for dialect %s in %s/{%s}", file, d.Name, dir, strings.Join(layers, ","))
	}
	return f, nil
}

// runsOn refuses dialect d unless the SQL tree under dir has a directory
// of one of its layers (its base's or its own).
func runsOn(fsys fs.FS, dir string, layers []string, d dbtarget.Dialect) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	var have []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == Generic {
			continue
		}
		if slices.Contains(layers, e.Name()) {
			return nil
		}
		have = append(have, e.Name())
	}
	return exitcode.Userf("this workload does not run on %s: it has SQL for %s only", d.Name, strings.Join(have, ", "))
}

// ReadSQL reads a named-block file from a workload's embedded files.
func ReadSQL(fsys fs.FS, path string) (SQLFile, error) {
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, err
	}
	return parseSQL(path, b)
}

// parseSQL reads the named blocks of b, the file at path.
func parseSQL(path string, b []byte) (SQLFile, error) {
	f := SQLFile{}
	name := ""
	var sb strings.Builder
	flush := func() {
		if name != "" {
			f[name] = strings.TrimSpace(sb.String())
		}
		sb.Reset()
	}
	for i, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		if n, ok := strings.CutPrefix(t, "-- name:"); ok {
			flush()
			name = strings.TrimSpace(n)
			if name == "" {
				return nil, fmt.Errorf("%s line %d: a block without a name", path, i+1)
			}
			if _, dup := f[name]; dup {
				return nil, fmt.Errorf("%s: block %q named twice", path, name)
			}
			continue
		}
		if strings.HasPrefix(t, "--") {
			continue
		}
		if name == "" && t != "" {
			return nil, fmt.Errorf("%s line %d: SQL before the first \"-- name:\" line, in no block", path, i+1)
		}
		sb.WriteString(line)
		sb.WriteByte('\n')
	}
	flush()
	return f, nil
}

// Get returns a block, panicking if it is missing: the files are embedded,
// so a missing block is a bug that the tests catch, not a user error.
func (f SQLFile) Get(name string) string {
	s, ok := f[name]
	if !ok {
		panic("sql block " + name + " missing")
	}
	return s
}

// Statements splits a block at lines ending in ";". A block holding a
// routine body, whose inner lines end in ";" too, is run whole with Get.
func (f SQLFile) Statements(name string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(f.Get(name), "\n") {
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			if s := strings.TrimSpace(cur.String()); s != ";" {
				out = append(out, strings.TrimSuffix(s, ";"))
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// Named returns, sorted, the names of the blocks that start with prefix.
func (f SQLFile) Named(prefix string) []string {
	var out []string
	for n := range f {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
