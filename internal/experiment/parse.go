package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/workload"
	"go.yaml.in/yaml/v3"
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
		case "thresholds":
			s.thresholdsWritten, err = p.thresholds(v)
		case "repeat":
			var r string
			if r, err = p.scalar(v, key); err == nil {
				s.Repeat, err = strconv.Atoi(r)
				if err != nil || s.Repeat < 1 {
					err = p.errf(v, "repeat: want a whole number of at least 1, got %s", describe(v))
				}
			}
		default:
			err = p.errf(k, "unknown key %q at the top level (known: name, target, workload, build, run, vary, follow, baseline, repeat, with, thresholds)", key)
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
			var known bool
			if known, err = p.topology(key, v, "target", &t.Topology); !known {
				err = p.errf(k, "unknown key %q in target (known: managed, settings, pg_bin, servers, memory, cpus, url, %s)", key, strings.Join(topologyKeys, ", "))
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	for i := range t.Servers {
		b := &t.Servers[i]
		if b.Kind == "" {
			b.Kind = t.Server
		}
		if !b.ownTopology {
			b.Topology = t.Topology
		}
	}
	if err := t.Topology.Check(); err != nil {
		return p.errf(n, "target: %v", err)
	}
	for _, b := range append([]Build{{Kind: t.Server, Topology: t.Topology}}, t.Servers...) {
		if t.Managed && !b.Topology.IsZero() {
			if err := server.CheckCluster(b.Kind, b.Topology); err != nil {
				return p.errf(n, "target: %v", err)
			}
		}
	}
	if !t.Managed && !t.Topology.IsZero() {
		return p.errf(n, "target: replicas and the other cluster keys make a cluster dbrig starts; only a managed target (target: {managed: postgres}) can have them")
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
					var known bool
					known, err = p.topology(key, v, where, &b.Topology)
					b.ownTopology = b.ownTopology || known
					if !known {
						err = p.errf(k, "unknown key %q in %s (known: managed, bin, settings, %s)", key, where, strings.Join(topologyKeys, ", "))
					}
				}
				return err
			})
			if err == nil {
				if terr := b.Topology.Check(); terr != nil {
					err = p.errf(k, "%s: %v", where, terr)
				}
			}
		} else {
			b.Bin, err = p.scalar(v, where)
		}
		out = append(out, b)
		return err
	})
	return out, err
}

// topologyKeys are a cluster's keys, in target and in a build.
var topologyKeys = []string{"replicas", "sync_replicas", "nodes", "ha", "replica_delay", "ttl", "loop_wait"}

// topology reads key, if it is one of topologyKeys, into t; known says
// whether it was.
func (p parser) topology(key string, v *yaml.Node, where string, t *server.Topology) (known bool, err error) {
	if !slices.Contains(topologyKeys, key) {
		return false, nil
	}
	value, err := p.scalar(v, where+"."+key)
	if err != nil {
		return true, err
	}
	bad := func(want string) error { return p.errf(v, "%s.%s: want %s, got %q", where, key, want, value) }
	switch key {
	case "replicas", "sync_replicas", "nodes":
		n, err := strconv.Atoi(value)
		if err != nil {
			return true, bad("a whole number")
		}
		switch key {
		case "replicas":
			t.Replicas = n
		case "sync_replicas":
			t.SyncReplicas = n
		default:
			t.Nodes = n
		}
	case "ha":
		t.HA = value
	default:
		d, err := time.ParseDuration(value)
		if err != nil {
			return true, bad("a duration such as 2ms or 20s")
		}
		switch key {
		case "replica_delay":
			t.ReplicaDelay = d
		case "ttl":
			t.TTL = d
		default:
			t.LoopWait = d
		}
	}
	return true, nil
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
