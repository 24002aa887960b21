package cli_test

// The docs cannot drift from the command line: every command the README
// and docs/*.md show in a code block is checked against the real command
// tree, the Makefile, the bench scripts and the tests' own functions, and
// the blocks marked to run are run. Links between the pages must resolve.
//
// The conventions, for whoever writes the docs:
//   - A code block whose lines include a command (dbrig, go run ./cmd/dbrig,
//     go test, make, bench/*.sh, .ci/run) holds only commands, variable
//     assignments (T=...) and comments; curl, other go commands and gofmt
//     may stand on a line unchecked, and /usr/bin/time may lead one.
//   - A block with a dbrig command is preceded by <!-- run --> or by
//     <!-- not run: REASON -->. Every block's dbrig commands are parsed by
//     cobra (subcommand, flags, their values, arguments); a run block's are
//     run too, in order, in one directory per page, where the repository's
//     experiments/ is linked as in a clone.
//   - When a block runs, URL is the URL the last dbrig server start printed:
//     an assignment URL='...PORT...' stands for the reader's pasting it.
//   - <!-- file: NAME --> before a block writes its text to NAME in that
//     directory before the page's run blocks run.
//   - go test lines must name packages that exist, and tests, benchmarks or
//     fuzzers that match; make lines targets of the Makefile; bench scripts
//     flags that their Go programs define. Inline code naming a test
//     function, a go test command or a path in the tree is checked the same,
//     and a dbrig command named in prose must name real commands (or a
//     placeholder in capitals: dbrig run W) and flags.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/cli"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/spf13/cobra"
)

// docPage is one Markdown file: its path from the repository's root and
// its lines.
type docPage struct {
	name  string
	lines []string
}

// docBlock is one fenced code block of a page.
type docBlock struct {
	page  string
	line  int    // the opening fence's line, from 1
	info  string // the fence's info string: yaml, ...
	mark  string // the HTML comment on the line above, without <!-- -->
	lines []string
}

func (b docBlock) at(i int) string { return fmt.Sprintf("%s:%d", b.page, b.line+1+i) }

// repoRoot is the repository's root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readDocs reads README.md and docs/*.md.
func readDocs(t *testing.T, root string) []docPage {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names = append([]string{filepath.Join(root, "README.md")}, names...)
	var pages []docPage
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, n)
		pages = append(pages, docPage{name: rel, lines: strings.Split(string(b), "\n")})
	}
	return pages
}

var markRE = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// blocks returns a page's fenced code blocks, and calls prose with each
// line outside them.
func (p docPage) blocks(prose func(i int, line string)) []docBlock {
	var out []docBlock
	var cur *docBlock
	for i, line := range p.lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &docBlock{page: p.name, line: i + 1, info: strings.TrimPrefix(trimmed, "```")}
			for j := i - 1; j >= 0; j-- {
				if prev := strings.TrimSpace(p.lines[j]); prev != "" {
					if m := markRE.FindStringSubmatch(prev); m != nil {
						cur.mark = m[1]
					}
					break
				}
			}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		default:
			if prose != nil {
				prose(i, line)
			}
		}
	}
	return out
}

// shellWords splits a command line as a POSIX shell would, as far as the
// docs need: blanks, quotes, backslashes, $NAME and ${NAME} from vars
// (left as written when unknown), a # comment, and an operator (| ; & < >)
// that ends the command, whose words come before it.
func shellWords(line string, vars map[string]string) []string {
	var words []string
	var cur strings.Builder
	in := false
	flush := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	expand := func(s string) int {
		m := varRE.FindStringSubmatch(s)
		if m == nil {
			cur.WriteByte('$')
			return 0
		}
		name := m[1] + m[2]
		if v, ok := vars[name]; ok {
			cur.WriteString(v)
		} else {
			cur.WriteString("$" + m[0])
		}
		return len(m[0])
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !in, strings.IndexByte("|;&<>", c) >= 0:
			flush()
			return words
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			in = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				switch {
				case line[i] == '\\' && i+1 < len(line):
					i++
					cur.WriteByte(line[i])
				case line[i] == '$':
					i += expand(line[i+1:])
				default:
					cur.WriteByte(line[i])
				}
			}
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			in = true
		case c == '$':
			i += expand(line[i+1:])
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	flush()
	return words
}

var (
	varRE    = regexp.MustCompile(`^(?:\{(\w+)\}|(\w+))`)
	assignRE = regexp.MustCompile(`^([A-Za-z_]\w*)=(.*)$`)
)

// docCommand is one command line of a block, classified.
type docCommand struct {
	kind string // dbrig, go test, make, script
	args []string
}

// classify reads one line of a block: a command, an assignment (name and
// value), or neither (ok false). A leading curl or /usr/bin/time is taken
// as a command of its own or a prefix of one.
func classify(line string, vars map[string]string) (cmd docCommand, name, value string, ok bool) {
	trimmed := strings.TrimSpace(line)
	if m := assignRE.FindStringSubmatch(trimmed); m != nil {
		value := ""
		if w := shellWords(m[2], vars); len(w) > 0 {
			value = w[0]
		}
		return docCommand{}, m[1], value, true
	}
	w := shellWords(trimmed, vars)
	if len(w) == 0 {
		return docCommand{}, "", "", true
	}
	switch {
	case w[0] == "dbrig" || w[0] == "bin/dbrig":
		return docCommand{"dbrig", w[1:]}, "", "", true
	case len(w) >= 3 && w[0] == "go" && w[1] == "run" && w[2] == "./cmd/dbrig":
		return docCommand{"dbrig", w[3:]}, "", "", true
	case len(w) >= 2 && w[0] == "go" && w[1] == "test":
		return docCommand{"go test", w[2:]}, "", "", true
	case w[0] == "make":
		return docCommand{"make", w[1:]}, "", "", true
	case strings.HasPrefix(w[0], "bench/") || w[0] == ".ci/run":
		return docCommand{"script", w}, "", "", true
	case w[0] == "curl" || w[0] == "go" || w[0] == "gofmt":
		return docCommand{}, "", "", true
	case w[0] == "/usr/bin/time":
		if i := slices.Index(w, "dbrig"); i > 0 {
			return docCommand{"dbrig", w[i+1:]}, "", "", true
		}
	}
	return docCommand{}, "", "", false
}

// isCommandBlock says whether a block holds commands, not a diagram, a
// spec or output: a shell block with at least one line that is a command.
func isCommandBlock(b docBlock) bool {
	if b.info != "" && b.info != "sh" && b.info != "bash" && b.info != "shell" {
		return false
	}
	for _, line := range b.lines {
		if c, _, _, _ := classify(line, nil); c.kind != "" {
			return true
		}
	}
	return false
}

// resolve finds a dbrig command line's command in the real command tree
// and parses its flags, as running it would, without running it; it
// returns the command and its positional arguments.
func resolve(args []string) (*cobra.Command, []string, error) {
	root := cli.NewRoot()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return nil, nil, err
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", cmd.CommandPath(), err)
	}
	return cmd, cmd.Flags().Args(), nil
}

// parseCheck checks a dbrig command line as a shell would hand it to dbrig:
// its command, flags, their values and its arguments.
func parseCheck(args []string) error {
	cmd, pos, err := resolve(args)
	if err != nil {
		return err
	}
	// A command of subcommands that runs alone (dbrig runs) names no
	// argument in its use line; one that wants a subcommand does.
	if cmd.HasSubCommands() && (!cmd.Runnable() || len(pos) > 0 || strings.Contains(cmd.Use, " ")) {
		if len(pos) > 0 {
			return fmt.Errorf("%s has no subcommand %q", cmd.CommandPath(), pos[0])
		}
		return fmt.Errorf("%s names no subcommand", cmd.CommandPath())
	}
	if err := cmd.ValidateArgs(pos); err != nil {
		return fmt.Errorf("%s: %v", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return fmt.Errorf("%s: %v", cmd.CommandPath(), err)
	}
	return nil
}

var placeholderRE = regexp.MustCompile(`^[A-Z]+$`)

// mentionCheck checks a dbrig command named in prose, which may stop short
// of a whole command line (dbrig report, dbrig run W): its words must name
// commands, or a placeholder in capitals, and its flags must parse.
func mentionCheck(args []string) error {
	cmd, pos, err := resolve(args)
	if err != nil {
		return err
	}
	if cmd.HasSubCommands() && len(pos) > 0 && !placeholderRE.MatchString(pos[0]) {
		return fmt.Errorf("%s has no subcommand %q", cmd.CommandPath(), pos[0])
	}
	return nil
}

// TestDocsCommands checks every command in every code block, and the
// marks that say whether a block runs.
func TestDocsCommands(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	tree := newSourceTree(t, root)
	run, notRun := 0, 0
	for _, p := range readDocs(t, root) {
		for _, b := range p.blocks(nil) {
			if !isCommandBlock(b) {
				if b.mark != "" && !strings.HasPrefix(b.mark, "file: ") {
					t.Errorf("%s: %q marks a block that holds no command", b.at(-1), b.mark)
				}
				continue
			}
			vars := map[string]string{}
			dbrigs := 0
			for i, line := range b.lines {
				c, name, value, ok := classify(line, vars)
				switch {
				case !ok:
					t.Errorf("%s: %q is not a command this test knows (dbrig, go, make, bench/, .ci/run, curl)", b.at(i), strings.TrimSpace(line))
				case name != "":
					vars[name] = value
				case c.kind == "dbrig":
					dbrigs++
					if err := parseCheck(c.args); err != nil {
						t.Errorf("%s: dbrig %s: %v", b.at(i), strings.Join(c.args, " "), err)
					}
				case c.kind != "":
					if err := tree.check(c); err != nil {
						t.Errorf("%s: %s", b.at(i), err)
					}
				}
			}
			switch reason, isNot := strings.CutPrefix(b.mark, "not run:"); {
			case dbrigs == 0:
			case b.mark == "run":
				run += dbrigs
			case isNot && len(strings.TrimSpace(reason)) >= 10:
				notRun += dbrigs
			default:
				t.Errorf("%s: a block of dbrig commands needs <!-- run --> or <!-- not run: REASON --> above it, not %q", b.at(-1), b.mark)
			}
		}
	}
	t.Logf("dbrig commands in the docs: %d run by TestDocsRun, %d parsed only", run, notRun)
}

// sourceTree answers what the docs' non-dbrig commands name: packages and
// their test functions, Makefile targets, scripts and their flags.
type sourceTree struct {
	root    string
	targets []string
	funcs   map[string]bool // every Test, Benchmark, Fuzz and Example function
}

var (
	testFuncRE = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`)
	targetRE   = regexp.MustCompile(`(?m)^([A-Za-z][\w.-]*)\s*:([^=]|$)`)
)

func newSourceTree(t *testing.T, root string) *sourceTree {
	t.Helper()
	s := &sourceTree{root: root, funcs: map[string]bool{}}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range targetRE.FindAllStringSubmatch(string(mk), -1) {
		s.targets = append(s.targets, m[1])
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			for _, f := range funcsIn(path) {
				s.funcs[f] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// funcsIn lists the test functions a file declares.
func funcsIn(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range testFuncRE.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

func (s *sourceTree) check(c docCommand) error {
	switch c.kind {
	case "go test":
		return s.goTest(c.args)
	case "make":
		for _, a := range c.args {
			if !strings.Contains(a, "=") && !strings.HasPrefix(a, "-") && !slices.Contains(s.targets, a) {
				return fmt.Errorf("make %s: the Makefile has no target %q", strings.Join(c.args, " "), a)
			}
		}
		return nil
	default:
		return s.script(c.args)
	}
}

// goTestValued are the go test flags the docs use that take a value.
var goTestValued = []string{"run", "bench", "fuzz", "benchtime", "count", "timeout", "tags", "fuzztime", "parallel", "cpu"}

// goTest checks a go test line: its flags, that each package exists, and
// that -bench, -fuzz or (alone) -run match functions of the package.
func (s *sourceTree) goTest(args []string) error {
	flags := map[string]string{}
	var pkgs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pkgs = append(pkgs, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case slices.Contains(goTestValued, name) && !hasVal && i+1 < len(args):
			i++
			val = args[i]
		case slices.Contains(goTestValued, name) && !hasVal:
			return fmt.Errorf("go test %s: %s needs a value", strings.Join(args, " "), a)
		case name != "v" && name != "race" && name != "short" && !slices.Contains(goTestValued, name):
			return fmt.Errorf("go test %s: flag %s unknown to this check", strings.Join(args, " "), a)
		}
		flags[name] = val
	}
	if len(pkgs) == 0 {
		return fmt.Errorf("go test %s names no package", strings.Join(args, " "))
	}
	for _, p := range pkgs {
		if err := s.goTestPackage(p, flags); err != nil {
			return fmt.Errorf("go test %s: %v", strings.Join(args, " "), err)
		}
	}
	return nil
}

func (s *sourceTree) goTestPackage(pkg string, flags map[string]string) error {
	rel, all := strings.CutSuffix(pkg, "/...")
	if !strings.HasPrefix(rel, "./") && rel != "." {
		return fmt.Errorf("package %s is not a path in the tree (./...)", pkg)
	}
	dir := filepath.Join(s.root, rel)
	gos, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(gos) == 0 && !all {
		return fmt.Errorf("no Go package at %s", pkg)
	}
	if all {
		return nil
	}
	var funcs []string
	for _, g := range gos {
		funcs = append(funcs, funcsIn(g)...)
	}
	want := map[string]string{"bench": "Benchmark", "fuzz": "Fuzz"}
	if flags["bench"] == "" && flags["fuzz"] == "" && flags["run"] != "" {
		want = map[string]string{"run": "Test"}
	}
	for flag, prefix := range want {
		pat := flags[flag]
		if pat == "" {
			continue
		}
		re, err := regexp.Compile(strings.Split(pat, "/")[0])
		if err != nil {
			return fmt.Errorf("-%s %q: %v", flag, pat, err)
		}
		if !slices.ContainsFunc(funcs, func(f string) bool {
			return (strings.HasPrefix(f, prefix) || flag == "run" && strings.HasPrefix(f, "Fuzz")) && re.MatchString(f)
		}) {
			return fmt.Errorf("-%s %q matches no %s function in %s", flag, pat, prefix, pkg)
		}
	}
	return nil
}

// flagDefRE finds a flag's definition in a bench program's source: a
// flag.XxxVar(&v, "name", ...) or a flag.Func("name", ...).
func flagDefRE(name string) *regexp.Regexp {
	q := regexp.QuoteMeta(name)
	return regexp.MustCompile(`\.\w*Var\([^,\n]*,\s*"` + q + `"|\.Func\(\s*"` + q + `"`)
}

// script checks that a script exists and is executable, and, for a bench
// script, that every flag it is given is one its Go program defines.
func (s *sourceTree) script(args []string) error {
	path := filepath.Join(s.root, args[0])
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", args[0])
	}
	prog, isBench := strings.CutSuffix(strings.TrimPrefix(args[0], "bench/"), ".sh")
	if !isBench {
		return nil
	}
	if gos, _ := filepath.Glob(filepath.Join(s.root, "bench", prog, "*.go")); len(gos) == 0 {
		return scriptFlags(args, path) // a script with no Go program of its own
	}
	var src strings.Builder
	for _, dir := range []string{filepath.Join(s.root, "bench", prog), filepath.Join(s.root, "bench", "internal", "harness")} {
		gos, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, g := range gos {
			if b, err := os.ReadFile(g); err == nil && !strings.HasSuffix(g, "_test.go") {
				src.Write(b)
			}
		}
	}
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !flagDefRE(name).MatchString(src.String()) {
			return fmt.Errorf("%s: bench/%s defines no flag %s", args[0], prog, a)
		}
	}
	return nil
}

// scriptFlags checks that every flag args gives the script at path is one
// its own text parses: its name as a case pattern or a test (`--name)`,
// `== --name`).
func scriptFlags(args []string, path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		if !regexp.MustCompile(`(^|[\s|(])` + regexp.QuoteMeta(name) + `\)|== ` + regexp.QuoteMeta(name) + `\b`).Match(text) {
			return fmt.Errorf("%s parses no flag %s", args[0], a)
		}
	}
	return nil
}

// TestDocsRun runs the blocks marked <!-- run -->, page by page, each page
// in a directory of its own, as processes of their own started there, so
// that the pages run in parallel, and beside the other tests.
func TestDocsRun(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	_, pgErr := postgres.FindBinDir("")
	if pgErr != nil && os.Getenv("DBRIG_REQUIRE_PG") == "1" {
		t.Fatalf("DBRIG_REQUIRE_PG=1 but %v", pgErr)
	}
	for _, p := range readDocs(t, root) {
		blocks := p.blocks(nil)
		if !slices.ContainsFunc(blocks, func(b docBlock) bool { return b.mark == "run" }) {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.Symlink(filepath.Join(root, "experiments"), filepath.Join(dir, "experiments")); err != nil {
				t.Fatal(err)
			}
			for _, b := range blocks {
				if name, ok := strings.CutPrefix(b.mark, "file: "); ok {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(b.lines, "\n")+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			vars, printed := map[string]string{}, map[string]bool{}
			for _, b := range blocks {
				if b.mark != "run" {
					continue
				}
				if pgErr != nil && needsPostgres(b) {
					t.Logf("%s: not run, no PostgreSQL here: %v", b.at(-1), pgErr)
					continue
				}
				runBlock(t, dir, b, vars, printed)
			}
		})
	}
}

// needsPostgres says whether a block starts a server or sweeps a spec of
// experiments/, which are all on managed servers.
func needsPostgres(b docBlock) bool {
	for _, line := range b.lines {
		if c, _, _, _ := classify(line, nil); c.kind == "dbrig" && len(c.args) > 0 &&
			(c.args[0] == "server" || slices.ContainsFunc(c.args, func(a string) bool { return strings.HasPrefix(a, "experiments/") })) {
			return true
		}
	}
	return false
}

var printedURL = regexp.MustCompile(`(?m)^URL:\s+(\S+)`)

// runBlock runs a block's dbrig commands in order, in dir, each of which
// must succeed. A variable a command printed (printed) stands, where the block
// assigns a placeholder to it. A server it starts is stopped at the end,
// whatever happens.
func runBlock(t *testing.T, dir string, b docBlock, vars map[string]string, printed map[string]bool) {
	t.Helper()
	for i, line := range b.lines {
		c, name, value, _ := classify(line, vars)
		if name != "" {
			if !printed[name] {
				vars[name] = value
			}
			continue
		}
		if c.kind != "dbrig" {
			continue
		}
		start := time.Now()
		o := dbrigIn(t, dir, c.args...)
		t.Logf("%s: %.1f s", b.at(i), time.Since(start).Seconds())
		if o.code != 0 {
			t.Fatalf("%s: dbrig %s: exit %d:\n%s", b.at(i), strings.Join(c.args, " "), o.code, o.stderr)
		}
		if len(c.args) >= 2 && c.args[0] == "server" && c.args[1] == "start" {
			m := printedURL.FindStringSubmatch(o.stdout)
			if m == nil {
				t.Fatalf("%s: server start printed no URL:\n%s", b.at(i), o.stdout)
			}
			vars["URL"], printed["URL"] = m[1], true
			stopAtCleanup(t, dir, c.args)
		}
	}
}

// stopAtCleanup stops the server a "server start" line run in dir
// started, in case the block fails before it stops it.
func stopAtCleanup(t *testing.T, dir string, start []string) {
	i := slices.Index(start, "--dir")
	if i < 0 || i+1 >= len(start) {
		t.Fatalf("server start without --dir: %v", start)
	}
	server := start[i+1]
	if !filepath.IsAbs(server) {
		server = filepath.Join(dir, server)
	}
	t.Cleanup(func() {
		if o := dbrig(t, "server", "status", "--dir", server); o.code == 0 {
			dbrig(t, "server", "stop", "--dir", server)
		}
	})
}

var (
	linkRE   = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineRE = regexp.MustCompile("`([^`]+)`")
	treeRE   = regexp.MustCompile(`^(?:experiments|internal|bench|cmd|docs)/[a-z0-9_./-]*$`)
	funcRE   = regexp.MustCompile(`^(?:Test|Benchmark|Fuzz)[A-Z]\w*$`)
)

// TestDocsLinks: every relative link and image of the pages leads to a
// file that exists, and an anchor to a heading of that page.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	pages := readDocs(t, root)
	anchors := map[string][]string{}
	for _, p := range pages {
		anchors[p.name] = headingAnchors(p)
	}
	for _, p := range pages {
		p.blocks(func(i int, line string) {
			for _, m := range linkRE.FindAllStringSubmatch(stripInline(line), -1) {
				if err := checkLink(root, p.name, m[1], anchors); err != nil {
					t.Errorf("%s:%d: %v", p.name, i+1, err)
				}
			}
		})
	}
}

// stripInline removes a line's inline code, where brackets are not links.
func stripInline(line string) string { return inlineRE.ReplaceAllString(line, "") }

func checkLink(root, page, link string, anchors map[string][]string) error {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return nil
	}
	path, anchor, _ := strings.Cut(link, "#")
	target := page
	if path != "" {
		target = filepath.Join(filepath.Dir(page), path)
		if _, err := os.Stat(filepath.Join(root, target)); err != nil {
			return fmt.Errorf("link %s: no such file", link)
		}
	}
	if anchor != "" {
		have, ok := anchors[filepath.Clean(target)]
		if !ok {
			return fmt.Errorf("link %s: an anchor into a page this test does not read", link)
		}
		if !slices.Contains(have, anchor) {
			return fmt.Errorf("link %s: %s has no heading #%s", link, target, anchor)
		}
	}
	return nil
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, punctuation dropped, blanks as hyphens, a repeat numbered.
func headingAnchors(p docPage) []string {
	var out []string
	seen := map[string]int{}
	p.blocks(func(_ int, line string) {
		text, ok := strings.CutPrefix(line, "#")
		if !ok {
			return
		}
		text = strings.TrimLeft(text, "#")
		if !strings.HasPrefix(text, " ") {
			return
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	})
	return out
}

// TestDocsNames: inline code in the pages that names a test function, a
// go test command or a path in the tree names one that exists.
func TestDocsNames(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	tree := newSourceTree(t, root)
	for _, p := range readDocs(t, root) {
		p.blocks(func(i int, line string) {
			for _, m := range inlineRE.FindAllStringSubmatch(line, -1) {
				if err := tree.checkInline(m[1]); err != nil {
					t.Errorf("%s:%d: %v", p.name, i+1, err)
				}
			}
		})
	}
}

func (s *sourceTree) checkInline(code string) error {
	switch {
	case funcRE.MatchString(code):
		if !s.funcs[code] {
			return fmt.Errorf("no test function %s in the tree", code)
		}
	case strings.HasPrefix(code, "dbrig "):
		c, _, _, _ := classify(code, nil)
		if err := mentionCheck(c.args); err != nil {
			return fmt.Errorf("%s: %v", code, err)
		}
	case strings.HasPrefix(code, "go test ") && strings.Contains(code, "./"):
		c, _, _, _ := classify(code, nil)
		return s.check(c)
	case treeRE.MatchString(code):
		if _, err := os.Stat(filepath.Join(s.root, code)); err != nil {
			return fmt.Errorf("no %s in the tree", code)
		}
	}
	return nil
}

// TestDocsCheckCatches: the checks above fail on what drift looks like: a
// command renamed, a flag dropped or mistyped, a bad value, a benchmark or
// a target gone; and pass what the docs write.
func TestDocsCheckCatches(t *testing.T) {
	t.Parallel()
	tree := newSourceTree(t, repoRoot(t))
	for _, tc := range []struct {
		line string
		bad  bool
	}{
		{`dbrig run tproc-c --vus 4 --rampup 10s --duration 60s`, false},
		{`go run ./cmd/dbrig run cpu --target "$T" --arith float   # float8`, false},
		{`/usr/bin/time -f "%U %S %e" dbrig run tproc-c --mode procs --target $U`, false},
		{`dbrig server start --dir pg1 --set shared_buffers=1GB`, false},
		{`dbrig sweep --resume bc`, false},
		{`go test -run '^$' -bench HostSample -benchtime 200x ./internal/telemetry/`, false},
		{`make test`, false},
		{`bench/tprocc.sh --quick --skip-pgbench`, false},
		{`dbrig runn tproc-c`, true},
		{`dbrig run tprocc`, true},
		{`dbrig run`, true},
		{`dbrig run tproc-c --warehouse 4`, true},
		{`dbrig run tproc-c --vus four`, true},
		{`dbrig run tproc-c --duration 60`, true},
		{`dbrig report`, true},
		{`dbrig server start --dir pg1 --set`, true},
		{`go test -bench NoSuchBenchmark ./internal/telemetry/`, true},
		{`go test -run TestNoSuchTest ./internal/telemetry/`, true},
		{`go test -bench . ./internal/nosuchpackage/`, true},
		{`make no-such-target`, true},
		{`bench/tprocc.sh --no-such-flag`, true},
		{`bench/nosuch.sh`, true},
	} {
		c, _, _, ok := classify(tc.line, map[string]string{"T": "sqlite:x.db"})
		var err error
		switch {
		case !ok || c.kind == "":
			err = fmt.Errorf("not a command")
		case c.kind == "dbrig":
			err = parseCheck(c.args)
		default:
			err = tree.check(c)
		}
		if (err != nil) != tc.bad {
			t.Errorf("%s: error %v, want one: %v", tc.line, err, tc.bad)
		}
	}
	if err := mentionCheck([]string{"run", "W"}); err != nil {
		t.Errorf("dbrig run W, named in prose: %v", err)
	}
	if err := mentionCheck([]string{"run", "tprocc"}); err == nil {
		t.Error("dbrig run tprocc, named in prose: no error")
	}
}

// TestShellWords: quotes, variables, comments and operators as a shell
// reads them.
func TestShellWords(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"URL": "postgres://u@h/db?a=1&b=2"}
	for line, want := range map[string][]string{
		`dbrig build tproc-c --target "$URL" --warehouses 1`:     {"dbrig", "build", "tproc-c", "--target", "postgres://u@h/db?a=1&b=2", "--warehouses", "1"},
		`dbrig run cpu --target $T   # a comment, with "quotes"`: {"dbrig", "run", "cpu", "--target", "$T"},
		`go test -run '^$' -bench . ./x/ | tee out`:              {"go", "test", "-run", "^$", "-bench", ".", "./x/"},
		`a\ b "c d" 'e "f"' ${URL}x`:                             {"a b", "c d", `e "f"`, "postgres://u@h/db?a=1&b=2x"},
	} {
		if got := shellWords(line, vars); !slices.Equal(got, want) {
			t.Errorf("shellWords(%s) = %q, want %q", line, got, want)
		}
	}
}
