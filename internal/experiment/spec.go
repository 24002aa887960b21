// Package experiment runs studies: a YAML spec names a workload, a target
// and the parameters to vary; the package expands the matrix, runs every
// point in an interleaved order of repetitions, and keeps the statistics
// in a sweep document beside each run's own document.
package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Param is one name=value pair, kept in the order the spec wrote it.
type Param struct {
	Name, Value string
	line        int
}

// Vary is one varied parameter and its values.
type Vary struct {
	Name   string
	Values []string
	Kind   ParamKind
	// Follows names the varied parameter this one follows, for a spec's
	// follow section: its i-th value goes with the leader's i-th.
	Follows string
	line    int
}

// ParamKind tells where a parameter goes.
type ParamKind int

const (
	// RunParam is a parameter of the runner or a workload run flag.
	RunParam ParamKind = iota
	// ServerParam is a server setting, applied at start (managed targets).
	ServerParam
	// PrewarmParam is the full-cache warm-up before each run.
	PrewarmParam
	// ConfineParam is the managed server's memory or CPUs (see
	// server.Confinement), applied at start.
	ConfineParam
	// BinParam picks the managed server's binaries: one of the builds
	// target.servers names.
	BinParam
)

// ServerKey is the parameter that varies the server's build, by the
// names target.servers gives them.
const ServerKey = "server"

// The names of the confinement's parameters, in target and in vary.
const (
	MemoryParam = "memory"
	CPUsParam   = "cpus"
)

// Target is where the sweep runs: a server dbrig manages, or a URL.
type Target struct {
	Managed bool
	// Server is the managed server's kind (see server.Kinds); `managed:
	// true`, from before there were kinds, means postgres.
	Server   string
	Settings []Param
	PGBin    string
	// Servers name the builds of the server a sweep compares, in the
	// spec's order; a point picks one with its server parameter. Empty
	// means the one build PGBin (or the usual places) gives.
	Servers     []Build
	serversLine int
	URL         string
	// Confinement is the machine the managed server gets, unless a point
	// varies it.
	Confinement server.Confinement
}

// Build is one build of target.servers: a kind of server, the directory
// of its binaries ("" for the usual places) and settings of its own, on
// top of the target's. A spec writes it as NAME: BIN_DIR, or as NAME:
// {managed: KIND, bin: BIN_DIR, settings: {...}} to compare kinds.
type Build struct {
	Name string
	// Kind is the target's (managed:) unless the build names another.
	Kind     string
	Bin      string
	Settings []Param
	line     int
}

// Spec is a parsed, validated experiment.
type Spec struct {
	// File is the path the spec was read from, for messages.
	File     string
	Name     string
	Target   Target
	Workload string
	// Build holds the workload's build flags by spec key.
	Build []Param
	// Run holds the fixed run parameters by spec name (rampup, vus, mode...).
	Run  []Param
	Vary []Vary
	// Follow are parameters whose values follow a varied one's, point by
	// point, instead of multiplying the points: memory with shared_buffers.
	Follow   []Vary
	Baseline []Param
	Repeat   int
	// With are other timed workloads every run drives in the same
	// window, by name, each with its virtual users and its defaults.
	With []Param
}

// Prewarm values.
const (
	PrewarmNone = "none"
	PrewarmFull = "full"
)

// specError is one line: where in the file, and what is wrong. A value
// the spec wrote over several lines shows its line breaks escaped.
func specError(file string, line int, format string, args ...any) error {
	msg := human.Unbroken(fmt.Sprintf(format, args...))
	if line > 0 {
		return exitcode.Userf("%s line %d: %s", file, line, msg)
	}
	return exitcode.Userf("%s: %s", file, msg)
}

// Parse reads and validates a spec. file names it in messages.
func Parse(file string, data []byte) (*Spec, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, specError(file, 0, "empty experiment spec")
		}
		return nil, specError(file, 0, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	p := parser{file: file}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	s, err := p.spec(root)
	if err != nil {
		return nil, err
	}
	s.File = file
	return s, nil
}

type parser struct{ file string }

// values reads a list of values for parameter name, each once if
// distinct; where names the list in messages ("vary.vus").
func (p parser) values(name, where string, distinct bool, k, v *yaml.Node) (Vary, error) {
	vr := Vary{Name: name, line: k.Line}
	if v.Kind != yaml.SequenceNode {
		return vr, p.errf(v, "%s: want a list of values, got %s", where, describe(v))
	}
	if len(v.Content) == 0 {
		return vr, p.errf(k, "%s: the list of values is empty", where)
	}
	for _, item := range v.Content {
		val, err := p.scalar(item, where)
		if err != nil {
			return vr, err
		}
		if distinct && slices.Contains(vr.Values, val) {
			return vr, p.errf(item, "%s: value %s is listed twice", where, val)
		}
		vr.Values = append(vr.Values, val)
	}
	return vr, nil
}

func (p parser) errf(n *yaml.Node, format string, args ...any) error {
	return specError(p.file, n.Line, format, args...)
}

// mapping walks a mapping node's keys in order, refusing duplicates and
// any key that known does not accept.
func (p parser) mapping(n *yaml.Node, where string, fn func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s: want a mapping (key: value ...), got %s", where, describe(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, "%s: keys must be plain names", where)
		}
		if seen[k.Value] {
			return p.errf(k, "duplicate key %q in %s", k.Value, where)
		}
		seen[k.Value] = true
		if err := fn(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

// scalar is a plain value: a string, number or boolean, as written.
func (p parser) scalar(n *yaml.Node, where string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errf(n, "%s: want a single value, got %s", where, describe(n))
	}
	return n.Value, nil
}

func (p parser) params(n *yaml.Node, where string) ([]Param, error) {
	var out []Param
	err := p.mapping(n, where, func(key string, k, v *yaml.Node) error {
		s, err := p.scalar(v, where+"."+key)
		if err != nil {
			return err
		}
		out = append(out, Param{Name: key, Value: s, line: k.Line})
		return nil
	})
	return out, err
}

func (p parser) spec(root *yaml.Node) (*Spec, error) {
	s := &Spec{Repeat: 1}
	lines := map[string]int{}
	var targetNode *yaml.Node
	err := p.mapping(root, "the spec", func(key string, k, v *yaml.Node) error {
		lines[key] = k.Line
		var err error
		switch key {
		case "name":
			s.Name, err = p.scalar(v, key)
		case "workload":
			s.Workload, err = p.scalar(v, key)
		case "target":
			targetNode = v
			err = p.target(v, &s.Target)
		case "build":
			s.Build, err = p.params(v, key)
		case "run":
			s.Run, err = p.params(v, key)
		case "vary":
			err = p.mapping(v, key, func(name string, k, v *yaml.Node) error {
				vr, err := p.values(name, "vary."+name, true, k, v)
				s.Vary = append(s.Vary, vr)
				return err
			})
		case "follow":
			err = p.mapping(v, key, func(name string, k, v *yaml.Node) error {
				return p.mapping(v, "follow."+name, func(leader string, lk, lv *yaml.Node) error {
					if len(v.Content) > 2 {
						return p.errf(v, "follow.%s: name one varied parameter it follows", name)
					}
					vr, err := p.values(name, "follow."+name+"."+leader, false, lk, lv)
					vr.Follows, vr.line = leader, k.Line
					s.Follow = append(s.Follow, vr)
					return err
				})
			})
		case "baseline":
			s.Baseline, err = p.params(v, key)
		case "with":
			s.With, err = p.params(v, key)
		case "repeat":
			var r string
			if r, err = p.scalar(v, key); err == nil {
				s.Repeat, err = strconv.Atoi(r)
				if err != nil || s.Repeat < 1 {
					err = p.errf(v, "repeat: want a whole number of at least 1, got %s", describe(v))
				}
			}
		default:
			err = p.errf(k, "unknown key %q at the top level (known: name, target, workload, build, run, vary, follow, baseline, repeat, with)", key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if s.Workload == "" {
		return nil, p.errf(root, "missing key \"workload\" (known: %s)", strings.Join(workload.Names(), ", "))
	}
	if targetNode == nil {
		return nil, p.errf(root, "missing key \"target\": give target: {managed: postgres} or target: {url: ...}")
	}
	if s.Name == "" {
		s.Name = "sweep"
	}
	if err := s.validate(p, lines); err != nil {
		return nil, err
	}
	if err := s.bounded(p, lines); err != nil {
		return nil, err
	}
	return s, nil
}

// MaxRuns bounds a sweep's runs, its points times repeat: 10,000 runs of
// 70 s are eight days. Past that a spec is a slip of the keyboard, not a
// plan, and its matrix alone could fill the memory.
const MaxRuns = 10000

// bounded refuses a spec of more than MaxRuns runs, naming the line that
// took it past.
func (s *Spec) bounded(p parser, lines map[string]int) error {
	runs := s.Repeat
	if runs > MaxRuns {
		return specError(p.file, lines["repeat"], "repeat: %d runs of each point; at most %d runs in all", s.Repeat, MaxRuns)
	}
	for _, v := range s.Vary {
		runs *= len(v.Values)
		if runs > MaxRuns {
			return specError(p.file, v.line, "vary.%s: the sweep would make more than %d runs (points times repeat); vary fewer values, or fewer parameters at once", v.Name, MaxRuns)
		}
	}
	return nil
}

func (p parser) target(n *yaml.Node, t *Target) error {
	managedSet := false
	err := p.mapping(n, "target", func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "managed":
			managedSet = true
			switch {
			case v.Kind == yaml.ScalarNode && v.Tag == "!!bool":
				t.Managed = v.Value == "true"
				if t.Managed {
					t.Server = server.Default()
				}
			case v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value != "":
				t.Managed, t.Server = true, v.Value
			default:
				return p.errf(v, "target.managed: want a server kind (%s), got %s", strings.Join(server.Kinds(), ", "), describe(v))
			}
			if t.Managed {
				if _, err := server.Lookup(t.Server); err != nil {
					return p.errf(v, "target.managed: %v", err)
				}
			}
		case "settings":
			t.Settings, err = p.params(v, "target.settings")
		case "pg_bin":
			t.PGBin, err = p.scalar(v, "target.pg_bin")
		case "servers":
			t.serversLine = k.Line
			if t.Servers, err = p.builds(v); err == nil && len(t.Servers) == 0 {
				err = p.errf(k, "target.servers: name at least one build (NAME: BIN_DIR, or NAME: {managed: KIND, bin: BIN_DIR, settings: {...}})")
			}
		case "url":
			t.URL, err = p.scalar(v, "target.url")
		case MemoryParam, CPUsParam:
			var value string
			if value, err = p.scalar(v, "target."+key); err == nil {
				err = setConfinement(&t.Confinement, key, value)
			}
			if err != nil {
				err = p.errf(v, "target.%s: %v", key, err)
			}
		default:
			err = p.errf(k, "unknown key %q in target (known: managed, settings, pg_bin, servers, memory, cpus, url)", key)
		}
		return err
	})
	if err != nil {
		return err
	}
	for i := range t.Servers {
		if t.Servers[i].Kind == "" {
			t.Servers[i].Kind = t.Server
		}
	}
	switch {
	case t.Managed && t.URL != "":
		return p.errf(n, "target: give either url or managed, not both")
	case !t.Managed && t.URL == "":
		if managedSet {
			return p.errf(n, "target: managed is false, so give the url of the database to run on")
		}
		return p.errf(n, "target: give managed: postgres (dbrig starts its own server) or url: ...")
	case !t.Managed && t.PGBin != "":
		return p.errf(n, "target.pg_bin applies only to a managed target (managed: postgres)")
	case !t.Managed && len(t.Servers) > 0:
		return p.errf(n, "target.servers names builds of a server dbrig starts; only a managed target (managed: postgres) can have them")
	case t.PGBin != "" && len(t.Servers) > 0:
		return p.errf(n, "target: give pg_bin (one build) or servers (several), not both")
	case !t.Managed && len(t.Settings) > 0:
		return p.errf(n, "target.settings: %s is a server setting; only a managed target (target: {managed: postgres}) can set it", t.Settings[0].Name)
	case !t.Managed && !t.Confinement.IsZero():
		return p.errf(n, "target: memory and cpus confine a server dbrig starts; only a managed target (target: {managed: postgres}) can have them")
	}
	return nil
}

// builds reads target.servers: NAME: BIN_DIR, or NAME: {managed: KIND,
// bin: BIN_DIR, settings: {...}}.
func (p parser) builds(n *yaml.Node) ([]Build, error) {
	var out []Build
	err := p.mapping(n, "target.servers", func(name string, k, v *yaml.Node) error {
		b := Build{Name: name, line: k.Line}
		where := "target.servers." + name
		// A name becomes a directory's (server-NAME) in the sweep's.
		if !buildName.MatchString(name) {
			return p.errf(k, "target.servers: %q: name a build with letters, digits, '.', '_' and '-' only", name)
		}
		var err error
		if v.Kind == yaml.MappingNode {
			err = p.mapping(v, where, func(key string, k, v *yaml.Node) error {
				var err error
				switch key {
				case "managed":
					if b.Kind, err = p.scalar(v, where+".managed"); err == nil {
						if _, lerr := server.Lookup(b.Kind); lerr != nil {
							err = p.errf(v, "%s.managed: %v", where, lerr)
						}
					}
				case "bin":
					b.Bin, err = p.scalar(v, where+".bin")
				case "settings":
					b.Settings, err = p.params(v, where+".settings")
				default:
					err = p.errf(k, "unknown key %q in %s (known: managed, bin, settings)", key, where)
				}
				return err
			})
		} else {
			b.Bin, err = p.scalar(v, where)
		}
		out = append(out, b)
		return err
	})
	return out, err
}

var buildName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// setConfinement reads value into c's memory or CPUs, by name.
func setConfinement(c *server.Confinement, name, value string) error {
	var err error
	if name == MemoryParam {
		c.Memory, err = server.ParseMemory(value)
	} else {
		c.CPUs, err = server.ParseCPUs(value)
	}
	return err
}

// Info is what the sweep's runs declare: the workload's metrics, and
// those of the workloads it runs with.
func (s *Spec) Info() workload.Info {
	w, _ := workload.New(s.Workload)
	ws := []workload.Workload{w}
	for _, g := range s.With {
		o, _ := workload.New(g.Name) // checked with the spec
		ws = append(ws, o)
	}
	return workload.MixInfo(ws)
}

// flagName maps a spec key to the workload flag it sets.
func flagName(key string) string { return runner.FlagName(key) }

// validate checks every value against what it sets: the workload's own
// flags, the runner's parameters, the target's kind.
func (s *Spec) validate(p parser, lines map[string]int) error {
	w, ok := workload.New(s.Workload)
	if !ok {
		return p.errf(&yaml.Node{Line: lines["workload"]}, "unknown workload %q (known: %s)", s.Workload, strings.Join(workload.Names(), ", "))
	}
	fixedWork := w.Info().FixedWork
	for _, g := range s.With {
		other, ok := workload.New(g.Name)
		vus, err := strconv.Atoi(g.Value)
		switch {
		case fixedWork:
			return specError(p.file, g.line, "with: %s runs a fixed amount of work, so no other workload can run beside it", s.Workload)
		case !ok:
			return specError(p.file, g.line, "with: unknown workload %q (known: %s)", g.Name, strings.Join(workload.Names(), ", "))
		case other.Info().FixedWork:
			return specError(p.file, g.line, "with: %s runs a fixed amount of work, not in a timed window", g.Name)
		case err != nil || vus < 1:
			return specError(p.file, g.line, "with.%s: want its virtual users, a whole number of at least 1, got %q", g.Name, g.Value)
		}
	}
	buildFlags := pflag.NewFlagSet("build", pflag.ContinueOnError)
	if b, ok := w.(workload.Builder); ok {
		b.BuildFlags(buildFlags)
	}
	runFlags := pflag.NewFlagSet("run", pflag.ContinueOnError)
	w.RunFlags(runFlags)
	// The target kinds the runs open: the URL's, or each build's.
	targetKinds := []string{dbtarget.KindOf(s.Target.URL)}
	if s.Target.Managed {
		targetKinds = nil
		for _, kind := range s.Target.Kinds() {
			k, _ := server.Lookup(kind) // checked by target
			targetKinds = append(targetKinds, k.Target)
		}
	}

	for _, b := range s.Build {
		if buildFlags.Lookup(flagName(b.Name)) == nil {
			if !buildFlags.HasFlags() {
				return specError(p.file, b.line, "%s has no build step, so it takes no build section", s.Workload)
			}
			return specError(p.file, b.line, "unknown key %q in build (known: %s)", b.Name, flagKeys(buildFlags))
		}
		if err := setFlag(buildFlags, b.Name, b.Value); err != nil {
			return specError(p.file, b.line, "build.%s: %v", b.Name, err)
		}
	}
	var runKeys []string
	for _, rp := range runner.Params {
		if rp.Applies(fixedWork) {
			runKeys = append(runKeys, rp.Name)
		}
	}
	runKeys = append(runKeys, "prewarm")
	if k := flagKeys(runFlags); k != "" {
		runKeys = append(runKeys, k)
	}
	// checkRun validates one value of a run parameter; false means the
	// name is not a run parameter at all.
	checkRun := func(name, value string) (bool, error) {
		if rp, ok := runner.Lookup(name); ok {
			if !rp.Applies(fixedWork) {
				return true, fmt.Errorf("%s runs a fixed amount of work, so %s does not apply (use its own parameters: %s)", s.Workload, name, flagKeys(runFlags))
			}
			o := runner.Defaults()
			o.Beside = s.beside()
			return true, o.Set(name, value)
		}
		switch name {
		case "prewarm":
			if value != PrewarmNone && value != PrewarmFull {
				return true, fmt.Errorf("want none or full, got %q", value)
			}
			if value == PrewarmFull && slices.ContainsFunc(targetKinds, func(k string) bool { return !dbtarget.CanPrewarm(k) }) {
				return true, fmt.Errorf("a full-cache warm-up needs a target that can prewarm its cache (%s)", strings.Join(dbtarget.Prewarming(), ", "))
			}
		default:
			if runFlags.Lookup(flagName(name)) == nil {
				return false, nil
			}
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			fresh, _ := workload.New(s.Workload)
			fresh.RunFlags(fs)
			return true, setFlag(fs, name, value)
		}
		return true, nil
	}
	for _, r := range s.Run {
		ok, err := checkRun(r.Name, r.Value)
		if !ok {
			return specError(p.file, r.line, "unknown key %q in run (known: %s)", r.Name, strings.Join(runKeys, ", "))
		}
		if err != nil {
			return specError(p.file, r.line, "run.%s: %v", r.Name, err)
		}
	}
	// classify finds where a varied or following parameter goes and
	// checks its values.
	classify := func(v *Vary, where string) error {
		if buildFlags.Lookup(flagName(v.Name)) != nil {
			return specError(p.file, v.line, "%s is a build parameter: the schema is built once per sweep, so it cannot vary", v.Name)
		}
		ok, _ := checkRun(v.Name, v.Values[0])
		switch {
		case v.Name == ServerKey:
			v.Kind = BinParam
			if !s.Target.Managed {
				return specError(p.file, v.line, "%s picks the binaries of a server dbrig starts; only a managed target (target: {managed: postgres}) can vary it", v.Name)
			}
			if len(s.Target.Servers) == 0 {
				return specError(p.file, v.line, "%s.%s: name the builds first, in target: {servers: {NAME: BIN_DIR, ...}}", where, v.Name)
			}
			names := make([]string, len(s.Target.Servers))
			for i, b := range s.Target.Servers {
				names[i] = b.Name
			}
			for _, val := range v.Values {
				if !slices.Contains(names, val) {
					return specError(p.file, v.line, "%s.%s: %s is not a build in target.servers (%s)", where, v.Name, val, strings.Join(names, ", "))
				}
			}
			return nil
		case v.Name == MemoryParam || v.Name == CPUsParam:
			v.Kind = ConfineParam
			if !s.Target.Managed {
				return specError(p.file, v.line, "%s confines a server dbrig starts; only a managed target (target: {managed: postgres}) can vary it", v.Name)
			}
			if _, fixed := s.Target.Confine(v.Name); fixed {
				return specError(p.file, v.line, "%s is both in target and in %s: keep it in one place", v.Name, where)
			}
			for _, val := range v.Values {
				if err := setConfinement(&server.Confinement{}, v.Name, val); err != nil {
					return specError(p.file, v.line, "%s.%s: %v", where, v.Name, err)
				}
			}
			return nil
		case !ok:
			v.Kind = ServerParam
			if !s.Target.Managed {
				return specError(p.file, v.line, "%s is a server setting; only a managed target (target: {managed: postgres}) can vary it", v.Name)
			}
			if strings.ContainsAny(v.Name, " =\t'\"") {
				return specError(p.file, v.line, "%q is not a server setting's name", v.Name)
			}
			return nil
		case v.Name == "prewarm":
			v.Kind = PrewarmParam
		default:
			v.Kind = RunParam
		}
		for _, val := range v.Values {
			if _, err := checkRun(v.Name, val); err != nil {
				return specError(p.file, v.line, "%s.%s: %v", where, v.Name, err)
			}
		}
		if slices.ContainsFunc(s.Run, func(r Param) bool { return r.Name == v.Name }) {
			return specError(p.file, v.line, "%s is both in run and in %s: keep it in one place", v.Name, where)
		}
		return nil
	}
	for i := range s.Vary {
		if err := classify(&s.Vary[i], "vary"); err != nil {
			return err
		}
	}
	for i := range s.Follow {
		f := &s.Follow[i]
		leader := slices.IndexFunc(s.Vary, func(v Vary) bool { return v.Name == f.Follows })
		switch {
		case leader < 0:
			return specError(p.file, f.line, "follow.%s: %s is not a varied parameter (varied: %s)", f.Name, f.Follows, strings.Join(s.Varied(), ", "))
		case len(f.Values) != len(s.Vary[leader].Values):
			return specError(p.file, f.line, "follow.%s: %d values for the %d of %s: give one for each", f.Name, len(f.Values), len(s.Vary[leader].Values), f.Follows)
		case slices.ContainsFunc(s.Vary, func(v Vary) bool { return v.Name == f.Name }),
			slices.ContainsFunc(s.Follow[:i], func(v Vary) bool { return v.Name == f.Name }):
			return specError(p.file, f.line, "%s both varies and follows: keep it in one place", f.Name)
		}
		if err := classify(f, "follow"); err != nil {
			return err
		}
	}
	if len(s.Target.Servers) > 0 && !slices.ContainsFunc(append(slices.Clone(s.Vary), s.Follow...), func(v Vary) bool { return v.Name == ServerKey }) {
		return specError(p.file, s.Target.serversLine, "target.servers: nothing varies %s; add vary: {%s: [...]}, or give one build as pg_bin", ServerKey, ServerKey)
	}
	for _, b := range s.Baseline {
		i := slices.IndexFunc(s.Vary, func(v Vary) bool { return v.Name == b.Name })
		if i < 0 {
			return specError(p.file, b.line, "baseline: %s is not a varied parameter (varied: %s)", b.Name, strings.Join(s.Varied(), ", "))
		}
		if !slices.Contains(s.Vary[i].Values, b.Value) {
			return specError(p.file, b.line, "baseline: %s=%s is not among the varied values (%s)", b.Name, b.Value, strings.Join(s.Vary[i].Values, ", "))
		}
	}
	// The runner's defaults go in after the checks, so the spec's own
	// lines are reported, and the sweep document shows what ran.
	for _, rp := range runner.Params {
		if !rp.Timed || fixedWork || slices.ContainsFunc(s.Run, func(r Param) bool { return r.Name == rp.Name }) ||
			slices.ContainsFunc(s.Vary, func(v Vary) bool { return v.Name == rp.Name }) ||
			slices.ContainsFunc(s.Follow, func(v Vary) bool { return v.Name == rp.Name }) {
			continue
		}
		s.Run = append(s.Run, Param{Name: rp.Name, Value: rp.Default})
	}
	return nil
}

func setFlag(fs *pflag.FlagSet, key, value string) error {
	f := fs.Lookup(flagName(key))
	if f == nil {
		return fmt.Errorf("no such parameter")
	}
	if err := fs.Set(f.Name, value); err != nil {
		switch t := f.Value.Type(); {
		case t == "bool":
			return fmt.Errorf("want true or false, got %q", value)
		case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
			return fmt.Errorf("want a whole number, got %q", value)
		case t == "duration":
			return fmt.Errorf("want a duration such as 30s or 5m, got %q", value)
		}
		return fmt.Errorf("invalid value %q: %v", value, err)
	}
	return nil
}

func flagKeys(fs *pflag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, strings.ReplaceAll(f.Name, "-", "_")) })
	return strings.Join(names, ", ")
}

// Varied names the varied parameters in the spec's order.
func (s *Spec) Varied() []string {
	names := make([]string, len(s.Vary))
	for i, v := range s.Vary {
		names[i] = v.Name
	}
	return names
}

// orderedJSON writes params as a JSON object in their order, so that the
// spec kept in the sweep document parses back to the same spec.
type orderedJSON []Param

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	return objectInOrder(o, func(p Param) (string, any) { return p.Name, p.Value })
}

// orderedBuilds are target.servers, for a target whose kind is kind.
type orderedBuilds struct {
	builds []Build
	kind   string
}

// MarshalJSON writes the builds as the spec did: each its binaries'
// directory alone, or mappings when one has a kind of its own or settings.
func (o orderedBuilds) MarshalJSON() ([]byte, error) {
	plain := !slices.ContainsFunc(o.builds, func(b Build) bool { return b.Kind != o.kind || len(b.Settings) > 0 })
	return objectInOrder(o.builds, func(b Build) (string, any) {
		if plain {
			return b.Name, b.Bin
		}
		return b.Name, struct {
			Managed  string      `json:"managed"`
			Bin      string      `json:"bin,omitempty"`
			Settings orderedJSON `json:"settings,omitempty"`
		}{b.Kind, b.Bin, b.Settings}
	})
}

type orderedVary []Vary

func (o orderedVary) MarshalJSON() ([]byte, error) {
	return objectInOrder(o, func(v Vary) (string, any) { return v.Name, v.Values })
}

type orderedFollow []Vary

func (o orderedFollow) MarshalJSON() ([]byte, error) {
	return objectInOrder(o, func(v Vary) (string, any) { return v.Name, map[string][]string{v.Follows: v.Values} })
}

// objectInOrder writes items as one JSON object, keys in the items' order
// (encoding/json would sort a map's).
func objectInOrder[T any](items []T, kv func(T) (string, any)) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		name, value := kv(it)
		k, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// JSON is the spec after defaults, as the sweep document keeps it. Values
// are strings; Parse reads it back (JSON is YAML) for a resume.
func (s *Spec) JSON() json.RawMessage {
	type targetJSON struct {
		Managed  string         `json:"managed,omitempty"`
		Settings orderedJSON    `json:"settings,omitempty"`
		PGBin    string         `json:"pg_bin,omitempty"`
		Servers  *orderedBuilds `json:"servers,omitempty"`
		Memory   string         `json:"memory,omitempty"`
		CPUs     string         `json:"cpus,omitempty"`
		URL      string         `json:"url,omitempty"`
	}
	memory, _ := s.Target.Confine(MemoryParam)
	cpus, _ := s.Target.Confine(CPUsParam)
	var servers *orderedBuilds
	if len(s.Target.Servers) > 0 {
		servers = &orderedBuilds{s.Target.Servers, s.Target.Server}
	}
	v := struct {
		Name     string        `json:"name"`
		Target   targetJSON    `json:"target"`
		Workload string        `json:"workload"`
		Build    orderedJSON   `json:"build,omitempty"`
		Run      orderedJSON   `json:"run"`
		Vary     orderedVary   `json:"vary"`
		Follow   orderedFollow `json:"follow,omitempty"`
		Baseline orderedJSON   `json:"baseline,omitempty"`
		Repeat   int           `json:"repeat"`
		With     orderedJSON   `json:"with,omitempty"`
	}{s.Name, targetJSON{s.Target.Server, s.Target.Settings, s.Target.PGBin, servers, memory, cpus, dbtarget.Redact(s.Target.URL)},
		s.Workload, s.Build, s.Run, s.Vary, s.Follow, s.Baseline, s.Repeat, s.With}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // strings and ints only
	}
	return b
}

// Kinds are the kinds of the managed servers the sweep starts: the
// target's, or each build's, once each in the spec's order.
func (t Target) Kinds() []string {
	if len(t.Servers) == 0 {
		return []string{t.Server}
	}
	var kinds []string
	for _, b := range t.Servers {
		if !slices.Contains(kinds, b.Kind) {
			kinds = append(kinds, b.Kind)
		}
	}
	return kinds
}

// Confine is the target's fixed memory or cpus as a spec writes it, and
// whether the spec set it.
func (t Target) Confine(name string) (string, bool) {
	if name == MemoryParam && t.Confinement.Memory > 0 {
		return server.FormatMemory(t.Confinement.Memory), true
	}
	if name == CPUsParam && t.Confinement.CPUs != "" {
		return t.Confinement.CPUs, true
	}
	return "", false
}
