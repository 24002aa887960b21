// Package docs holds no code: its tests keep the pages beside them true to
// the code they describe.
package docs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// mayImport is the layering architecture.md states: what a package of
// each layer may import, by layer. Arrows point down only: nothing imports
// a command but another command, nothing but a command imports a kind
// (the test helpers excepted, which tests alone import), and the generic
// layers and the helpers import neither.
var mayImport = map[string][]string{
	"commands": {"commands", "kinds", "generic", "helpers"},
	"kinds":    {"generic", "helpers"},
	"generic":  {"generic", "helpers"},
	"helpers":  {"helpers"},
	"tests":    {"tests", "kinds", "generic", "helpers"},
}

// drawing is what architecture.md's imports block draws: each package's
// layer, and its arrows.
type drawing struct {
	layer  map[string]string
	arrows map[string]map[string]bool
}

// code is the module's packages and their imports of one another, from
// every non-test file whatever its build constraint: an import only a
// Windows build makes is still an arrow. An import is blank when every
// file that makes it makes it as _.
type code struct {
	imports map[string]map[string]bool // package → imported package → blank
}

// TestArchitecture: docs/architecture.md places every package of the
// module in a layer and draws every import between them, and no other; and
// the imports keep the layering the page states.
func TestArchitecture(t *testing.T) {
	page, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	c := loadCode(t)
	problems := compare(string(page), c)
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		return
	}
	// The same page with a package's line gone fails on the real code.
	doctored := strings.Replace(string(page), "\ncmd/dbrig ", "\n# cmd/dbrig ", 1)
	want := []string{`package cmd/dbrig is not placed in architecture.md's imports block: its line would be "cmd/dbrig -> cli"`}
	if got := compare(doctored, c); !slices.Equal(got, want) {
		t.Errorf("without cmd/dbrig's line the check says\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestArchitectureCheck: the check names each kind of difference between
// a page and the code, once, and only those.
func TestArchitectureCheck(t *testing.T) {
	const page = "# A page\n\nIts imports:\n\n```imports\n" +
		"[commands]  the binary\n" +
		"cmd/x   -> cli\n" +
		"cli     -> engine, kind/a   # blank\n" +
		"bench/b -> kind/a\n" +
		"[kinds]\n" +
		"kind/a  -> engine, human\n" +
		"[generic]\n" +
		"engine  -> human\n" +
		"[helpers]\n" +
		"human\n" +
		"[tests]\n" +
		"kit     -> kind/a\n" +
		"```\n\nMore prose.\n"
	codeOf := func(edit func(map[string]map[string]bool)) code {
		g := map[string]map[string]bool{
			"cmd/x":   {"cli": false},
			"cli":     {"engine": false, "kind/a": true},
			"bench/b": {"kind/a": false},
			"kind/a":  {"engine": false, "human": false},
			"engine":  {"human": false},
			"human":   {},
			"kit":     {"kind/a": false},
		}
		if edit != nil {
			edit(g)
		}
		return code{imports: g}
	}
	for _, c := range []struct {
		name     string
		from, to string // the page with from replaced by to
		edit     func(map[string]map[string]bool)
		want     []string
	}{
		{name: "true"},
		{name: "a package not placed", from: "engine  -> human\n", to: "",
			want: []string{`package engine is not placed in architecture.md's imports block: its line would be "engine -> human"`}},
		{name: "a package placed that is not", from: "human\n[tests]", to: "human\nghost\n[tests]",
			want: []string{"package ghost is placed in architecture.md, but there is no such package"}},
		{name: "an arrow drawn that is not", from: "kind/a  -> engine, human", to: "kind/a  -> engine, human, cli",
			want: []string{"the arrow kind/a -> cli is drawn, but kind/a does not import cli"}},
		{name: "an import not drawn", from: "kind/a  -> engine, human", to: "kind/a  -> engine",
			want: []string{"kind/a imports human, but the arrow kind/a -> human is not drawn"}},
		{name: "a package's arrows on two lines", from: "cli     -> engine, kind/a", to: "cli -> engine\ncli -> kind/a",
			want: nil},
		{name: "a generic package imports a kind", from: "engine  -> human", to: "engine  -> human, kind/a",
			edit: func(g map[string]map[string]bool) { g["engine"]["kind/a"] = false },
			want: []string{"engine (generic) imports kind/a (kinds): a package of the generic layer imports only generic, helpers"}},
		{name: "a kind imports a kind", from: "[generic]\n", to: "kind/b -> kind/a\n[generic]\n",
			edit: func(g map[string]map[string]bool) { g["kind/b"] = map[string]bool{"kind/a": false} },
			want: []string{"kind/b (kinds) imports kind/a (kinds): a package of the kinds layer imports only generic, helpers"}},
		{name: "code imports a test helper", from: "cli     -> engine, kind/a", to: "cli     -> engine, kind/a, kit",
			edit: func(g map[string]map[string]bool) { g["cli"]["kit"] = false },
			want: []string{"cli (commands) imports kit (tests): a package of the commands layer imports only commands, kinds, generic, helpers"}},
		{name: "the binary names a kind", edit: func(g map[string]map[string]bool) { g["cli"]["kind/a"] = false },
			want: []string{"cli imports kind/a other than blank (_): dbrig's commands import a kind only so that it registers itself"}},
		{name: "an unknown layer", from: "[helpers]", to: "[misc]",
			want: []string{`architecture.md line 14: "[misc]" is not one of the layers commands, generic, helpers, kinds, tests`}},
		{name: "a package in two layers", from: "human\n[tests]", to: "human\nengine\n[tests]",
			want: []string{"architecture.md line 16: engine is placed in two layers, generic and helpers"}},
		{name: "a package before any layer", from: "[commands]  the binary\n", to: "",
			want: []string{`architecture.md line 6: "cmd/x   -> cli" comes before any [layer] line`,
				`architecture.md line 7: "cli     -> engine, kind/a" comes before any [layer] line`,
				`architecture.md line 8: "bench/b -> kind/a" comes before any [layer] line`}},
		{name: "no block", from: "```imports", to: "```",
			want: []string{"architecture.md has no ```imports block"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := compare(strings.Replace(page, c.from, c.to, 1), codeOf(c.edit))
			if !slices.Equal(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// compare is every difference between the page's drawing and the code,
// one line each, and every import that breaks the layering.
func compare(page string, c code) []string {
	d, problems := parseDrawing(page)
	if d.layer == nil {
		return problems
	}
	for _, name := range slices.Sorted(maps.Keys(c.imports)) {
		if _, ok := d.layer[name]; !ok {
			line := name
			if len(c.imports[name]) > 0 {
				line += " -> " + strings.Join(slices.Sorted(maps.Keys(c.imports[name])), ", ")
			}
			problems = append(problems, fmt.Sprintf("package %s is not placed in architecture.md's imports block: its line would be %q", name, line))
			continue
		}
		for _, to := range slices.Sorted(maps.Keys(c.imports[name])) {
			if !d.arrows[name][to] {
				problems = append(problems, fmt.Sprintf("%s imports %s, but the arrow %s -> %s is not drawn", name, to, name, to))
			}
			problems = append(problems, layering(d, name, to, c.imports[name][to])...)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.layer)) {
		if _, ok := c.imports[name]; !ok {
			problems = append(problems, fmt.Sprintf("package %s is placed in architecture.md, but there is no such package", name))
			continue
		}
		for _, to := range slices.Sorted(maps.Keys(d.arrows[name])) {
			if _, ok := c.imports[name][to]; !ok {
				problems = append(problems, fmt.Sprintf("the arrow %s -> %s is drawn, but %s does not import %s", name, to, name, to))
			}
		}
	}
	return problems
}

// layering is what is wrong with from importing to, by the layers the
// page gives them.
func layering(d drawing, from, to string, blank bool) []string {
	lf, lt := d.layer[from], d.layer[to]
	if mayImport[lf] == nil || mayImport[lt] == nil {
		return nil // unplaced, or in no known layer, which compare says
	}
	var problems []string
	if !slices.Contains(mayImport[lf], lt) {
		problems = append(problems, fmt.Sprintf("%s (%s) imports %s (%s): a package of the %s layer imports only %s",
			from, lf, to, lt, lf, strings.Join(mayImport[lf], ", ")))
	}
	// The dbrig binary names no kind: each registers itself in its init,
	// and cli's blank imports only link it in. bench/ drives PostgreSQL
	// itself and may name it.
	if lf == "commands" && lt == "kinds" && !blank && !strings.HasPrefix(from, "bench/") {
		problems = append(problems, fmt.Sprintf("%s imports %s other than blank (_): dbrig's commands import a kind only so that it registers itself", from, to))
	}
	return problems
}

// parseDrawing reads the page's imports block: "[layer] what it is" lines,
// each followed by its packages, one a line, as "name -> name, name" (or
// the name alone, for a package that imports none of the module's). A
// package may take several lines; "#" starts a comment. Names are import
// paths in the module without the module's path and without "internal/".
func parseDrawing(page string) (drawing, []string) {
	block, first, ok := importsBlock(page)
	if !ok {
		return drawing{}, []string{"architecture.md has no ```imports block"}
	}
	d := drawing{layer: map[string]string{}, arrows: map[string]map[string]bool{}}
	var problems []string
	layer := ""
	for i, line := range block {
		where := fmt.Sprintf("architecture.md line %d", first+i)
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "["):
			name, _, closed := strings.Cut(line[1:], "]")
			if _, known := mayImport[name]; !closed || !known {
				problems = append(problems, fmt.Sprintf("%s: %q is not one of the layers %s", where, line, strings.Join(slices.Sorted(maps.Keys(mayImport)), ", ")))
			}
			layer = name
			continue
		case layer == "":
			problems = append(problems, fmt.Sprintf("%s: %q comes before any [layer] line", where, line))
		}
		from, to, _ := strings.Cut(line, "->")
		from = strings.TrimSpace(from)
		if l, placed := d.layer[from]; !placed {
			d.layer[from] = layer
		} else if l != layer {
			problems = append(problems, fmt.Sprintf("%s: %s is placed in two layers, %s and %s", where, from, l, layer))
		}
		if d.arrows[from] == nil {
			d.arrows[from] = map[string]bool{}
		}
		for _, name := range strings.Split(to, ",") {
			if name = strings.TrimSpace(name); name != "" {
				d.arrows[from][name] = true
			}
		}
	}
	return d, problems
}

// importsBlock is the lines of the page's first ```imports block, and the
// page's line number of the first of them.
func importsBlock(page string) (lines []string, first int, ok bool) {
	before, rest, found := strings.Cut(page, "\n```imports\n")
	if !found {
		return nil, 0, false
	}
	block, _, closed := strings.Cut(rest, "\n```")
	return strings.Split(block, "\n"), strings.Count(before, "\n") + 3, closed
}

// listed is what go list says of a package.
type listed struct {
	ImportPath                        string
	Dir                               string
	Module                            struct{ Path string }
	GoFiles, CgoFiles, IgnoredGoFiles []string
	Error                             *struct{ Err string }
}

// loadCode lists the module's packages with the go command and reads the
// imports of each one's files.
func loadCode(t *testing.T) code {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	c := code{imports: map[string]map[string]bool{}}
	paths := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		// A package whose every file is for other systems (bench/ on
		// Windows) is still a package, with imports.
		if p.Error != nil && !strings.Contains(p.Error.Err, "build constraints exclude all Go files") {
			t.Fatalf("go list: %s", p.Error.Err)
		}
		name := shortName(p.Module.Path, p.ImportPath)
		if other, dup := paths[name]; dup {
			t.Fatalf("%s and %s would both be %s in architecture.md", other, p.ImportPath, name)
		}
		paths[name] = p.ImportPath
		imports, err := fileImports(p)
		if err != nil {
			t.Fatal(err)
		}
		c.imports[name] = map[string]bool{}
		for path, blank := range imports {
			if path == p.Module.Path || strings.HasPrefix(path, p.Module.Path+"/") {
				c.imports[name][shortName(p.Module.Path, path)] = blank
			}
		}
	}
	return c
}

// fileImports is every import of p's non-test files, and whether every
// file that makes it makes it blank.
func fileImports(p listed) (map[string]bool, error) {
	imports := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		for _, spec := range file.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return nil, err
			}
			blank := spec.Name != nil && spec.Name.Name == "_"
			if was, seen := imports[path]; seen {
				blank = blank && was
			}
			imports[path] = blank
		}
	}
	return imports, nil
}

// shortName is path as architecture.md writes it: within the module, and
// without internal/.
func shortName(module, path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module+"/"), "internal/")
}
