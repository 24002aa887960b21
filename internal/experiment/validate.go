package experiment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

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

// flagName maps a spec key to the workload flag it sets.
func flagName(key string) string { return runner.FlagName(key) }

// validate checks every value against what it sets: the workload's own
// flags, the runner's parameters, the target's kind. The runner's
// defaults go in after the checks, so the spec's own lines are reported,
// and the sweep document shows what ran.
func (s *Spec) validate(p parser, lines map[string]int) error {
	w, ok := workload.New(s.Workload)
	if !ok {
		return p.errf(&yaml.Node{Line: lines["workload"]}, "unknown workload %q (known: %s)", s.Workload, strings.Join(workload.Names(), ", "))
	}
	c := newChecker(s, p, w)
	for _, check := range []func() error{c.with, c.build, c.run, c.vary, c.follow, c.pool, c.clusterActions, c.serversVaried, c.baseline, c.thresholds} {
		if err := check(); err != nil {
			return err
		}
	}
	s.addRunDefaults(c.fixedWork)
	return nil
}

// checker checks a spec's sections against what they set: the flags of
// its workload and the kinds of target its runs open.
type checker struct {
	s          *Spec
	workload   workload.Workload
	p          parser
	fixedWork  bool
	buildFlags *pflag.FlagSet
	runFlags   *pflag.FlagSet
	// targetKinds are the target kinds the runs open: the URL's, or each
	// build's.
	targetKinds []string
}

func newChecker(s *Spec, p parser, w workload.Workload) *checker {
	c := &checker{s: s, p: p, workload: w, fixedWork: w.Info().FixedWork,
		buildFlags: pflag.NewFlagSet("build", pflag.ContinueOnError),
		runFlags:   pflag.NewFlagSet("run", pflag.ContinueOnError),
	}
	if b, ok := w.(workload.Builder); ok {
		b.BuildFlags(c.buildFlags)
	}
	w.RunFlags(c.runFlags)
	c.targetKinds = []string{dbtarget.KindOf(s.Target.URL)}
	if s.Target.Managed {
		c.targetKinds = nil
		for _, kind := range s.Target.Kinds() {
			k, _ := server.Lookup(kind) // checked by target
			c.targetKinds = append(c.targetKinds, k.Target)
		}
	}
	return c
}

// errf is a refusal at line of the spec.
func (c *checker) errf(line int, format string, args ...any) error {
	return specError(c.p.file, line, format, args...)
}

// with checks the workloads run beside the sweep's and their virtual users.
func (c *checker) with() error {
	for _, g := range c.s.With {
		other, ok := workload.New(g.Name)
		vus, err := strconv.Atoi(g.Value)
		switch {
		case c.fixedWork:
			return c.errf(g.line, "with: %s runs a fixed amount of work, so no other workload can run beside it", c.s.Workload)
		case !ok:
			return c.errf(g.line, "with: unknown workload %q (known: %s)", g.Name, strings.Join(workload.Names(), ", "))
		case other.Info().FixedWork:
			return c.errf(g.line, "with: %s runs a fixed amount of work, not in a timed window", g.Name)
		case err != nil || vus < 1:
			return c.errf(g.line, "with.%s: want its virtual users, a whole number of at least 1, got %q", g.Name, g.Value)
		}
	}
	return nil
}

// build checks the build section against the workload's build flags.
func (c *checker) build() error {
	for _, b := range c.s.Build {
		if c.buildFlags.Lookup(flagName(b.Name)) == nil {
			if !c.buildFlags.HasFlags() {
				return c.errf(b.line, "%s has no build step, so it takes no build section", c.s.Workload)
			}
			return c.errf(b.line, "unknown key %q in build (known: %s)", b.Name, flagKeys(c.buildFlags))
		}
		if err := setFlag(c.buildFlags, b.Name, b.Value); err != nil {
			return c.errf(b.line, "build.%s: %v", b.Name, err)
		}
	}
	return nil
}

// run checks the run section: the runner's parameters, prewarm and the
// workload's run flags.
func (c *checker) run() error {
	for _, r := range c.s.Run {
		ok, err := c.runValue(r.Name, r.Value)
		if !ok {
			return c.errf(r.line, "unknown key %q in run (known: %s)", r.Name, strings.Join(c.runKeys(), ", "))
		}
		if err != nil {
			return c.errf(r.line, "run.%s: %v", r.Name, err)
		}
	}
	return nil
}

// runKeys are the names the run section takes.
func (c *checker) runKeys() []string {
	var keys []string
	for _, rp := range runner.Params {
		if rp.Applies(c.fixedWork) {
			keys = append(keys, rp.Name)
		}
	}
	keys = append(keys, "prewarm")
	if _, ok := c.workload.(workload.DurabilityAuditor); ok {
		keys = append(keys, AuditKey)
	}
	if k := flagKeys(c.runFlags); k != "" {
		keys = append(keys, k)
	}
	return keys
}

// runValue validates one value of a run parameter; false means the name
// is not a run parameter at all.
func (c *checker) runValue(name, value string) (bool, error) {
	if rp, ok := runner.Lookup(name); ok {
		if !rp.Applies(c.fixedWork) {
			return true, fmt.Errorf("%s runs a fixed amount of work, so %s does not apply (use its own parameters: %s)", c.s.Workload, name, flagKeys(c.runFlags))
		}
		o := runner.Defaults()
		o.Beside = c.s.beside()
		return true, o.Set(name, value)
	}
	switch name {
	case "prewarm":
		return true, c.prewarmValue(value)
	case AuditKey:
		return true, c.auditValue(value)
	default:
		if c.runFlags.Lookup(flagName(name)) == nil {
			return false, nil
		}
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fresh, _ := workload.New(c.s.Workload)
		fresh.RunFlags(fs)
		return true, setFlag(fs, name, value)
	}
}

// prewarmValue checks a value of prewarm, and that every target the runs
// open can warm its cache when it asks for a full warm-up.
func (c *checker) prewarmValue(value string) error {
	if value != PrewarmNone && value != PrewarmFull {
		return fmt.Errorf("want none or full, got %q", value)
	}
	if value == PrewarmFull && slices.ContainsFunc(c.targetKinds, func(k string) bool { return !dbtarget.CanPrewarm(k) }) {
		return fmt.Errorf("a full-cache warm-up needs a target that can prewarm its cache (%s)", strings.Join(dbtarget.Prewarming(), ", "))
	}
	return nil
}

// auditValue checks a value of audit_durability, and that the workload
// can audit what its runs acknowledged.
func (c *checker) auditValue(value string) error {
	if value != "true" && value != "false" {
		return fmt.Errorf("want true or false, got %q", value)
	}
	if _, ok := c.workload.(workload.DurabilityAuditor); !ok && value == "true" {
		var auditors []string
		for _, name := range workload.Names() {
			w, _ := workload.New(name)
			if _, ok := w.(workload.DurabilityAuditor); ok {
				auditors = append(auditors, name)
			}
		}
		return fmt.Errorf("%s has no durability audit (the workloads with one: %s)", c.s.Workload, strings.Join(auditors, ", "))
	}
	return nil
}

// vary classifies the varied parameters and checks their values.
func (c *checker) vary() error {
	for i := range c.s.Vary {
		if err := c.classify(&c.s.Vary[i], "vary"); err != nil {
			return err
		}
	}
	return nil
}

// follow checks that each following parameter follows a varied one, value
// for value, and classifies it as vary's are.
func (c *checker) follow() error {
	s := c.s
	for i := range s.Follow {
		f := &s.Follow[i]
		leader := slices.IndexFunc(s.Vary, func(v Vary) bool { return v.Name == f.Follows })
		switch {
		case leader < 0:
			return c.errf(f.line, "follow.%s: %s is not a varied parameter (varied: %s)", f.Name, f.Follows, strings.Join(s.Varied(), ", "))
		case len(f.Values) != len(s.Vary[leader].Values):
			return c.errf(f.line, "follow.%s: %d values for the %d of %s: give one for each", f.Name, len(f.Values), len(s.Vary[leader].Values), f.Follows)
		case slices.ContainsFunc(s.Vary, func(v Vary) bool { return v.Name == f.Name }),
			slices.ContainsFunc(s.Follow[:i], func(v Vary) bool { return v.Name == f.Name }):
			return c.errf(f.line, "%s both varies and follows: keep it in one place", f.Name)
		}
		if err := c.classify(f, "follow"); err != nil {
			return err
		}
	}
	return nil
}

// classify finds where a varied or following parameter goes and checks
// its values; where is its section.
func (c *checker) classify(v *Vary, where string) error {
	if c.buildFlags.Lookup(flagName(v.Name)) != nil {
		return c.errf(v.line, "%s is a build parameter: the schema is built once per sweep, so it cannot vary", v.Name)
	}
	isRun, _ := c.runValue(v.Name, v.Values[0])
	switch {
	case v.Name == AuditKey:
		return c.errf(v.line, "%s.%s: every run of a sweep is audited or none is: set it in run", where, v.Name)
	case v.Name == ServerKey:
		v.Kind = BinParam
		return c.buildValues(v, where)
	case v.Name == MemoryParam || v.Name == CPUsParam:
		v.Kind = ConfineParam
		return c.confineValues(v, where)
	case !isRun:
		v.Kind = ServerParam
		return c.settingName(v)
	case v.Name == "prewarm":
		v.Kind = PrewarmParam
	default:
		v.Kind = RunParam
	}
	return c.runValues(v, where)
}

// buildValues checks that a varied server names builds of target.servers.
func (c *checker) buildValues(v *Vary, where string) error {
	t := c.s.Target
	if !t.Managed {
		return c.errf(v.line, "%s picks the binaries of a server dbrig starts; only a managed target (target: {managed: postgres}) can vary it", v.Name)
	}
	if len(t.Servers) == 0 {
		return c.errf(v.line, "%s.%s: name the builds first, in target: {servers: {NAME: BIN_DIR, ...}}", where, v.Name)
	}
	names := make([]string, len(t.Servers))
	for i, b := range t.Servers {
		names[i] = b.Name
	}
	for _, val := range v.Values {
		if !slices.Contains(names, val) {
			return c.errf(v.line, "%s.%s: %s is not a build in target.servers (%s)", where, v.Name, val, strings.Join(names, ", "))
		}
	}
	return nil
}

// confineValues checks a varied memory or cpus: a managed target's, not
// fixed in target as well, each value one the confinement reads.
func (c *checker) confineValues(v *Vary, where string) error {
	if !c.s.Target.Managed {
		return c.errf(v.line, "%s confines a server dbrig starts; only a managed target (target: {managed: postgres}) can vary it", v.Name)
	}
	if _, fixed := c.s.Target.Confine(v.Name); fixed {
		return c.errf(v.line, "%s is both in target and in %s: keep it in one place", v.Name, where)
	}
	for _, val := range v.Values {
		if err := setConfinement(&server.Confinement{}, v.Name, val); err != nil {
			return c.errf(v.line, "%s.%s: %v", where, v.Name, err)
		}
	}
	return nil
}

// settingName checks a varied server setting: a managed target's, with a
// name that can be one. Its values are the server's to check.
func (c *checker) settingName(v *Vary) error {
	if !c.s.Target.Managed {
		return c.errf(v.line, "%s is a server setting; only a managed target (target: {managed: postgres}) can vary it", v.Name)
	}
	if strings.ContainsAny(v.Name, " =\t'\"") {
		return c.errf(v.line, "%q is not a server setting's name", v.Name)
	}
	return nil
}

// runValues checks each value of a varied run parameter, which the run
// section must not fix as well.
func (c *checker) runValues(v *Vary, where string) error {
	for _, val := range v.Values {
		if _, err := c.runValue(v.Name, val); err != nil {
			return c.errf(v.line, "%s.%s: %v", where, v.Name, err)
		}
	}
	if slices.ContainsFunc(c.s.Run, func(r Param) bool { return r.Name == v.Name }) {
		return c.errf(v.line, "%s is both in run and in %s: keep it in one place", v.Name, where)
	}
	return nil
}

// pool checks a pool of sessions (connections) at every point, as the
// runner will: at most one session per virtual user, and not beside
// with. Whether the workload's runs can share sessions at all is known
// only once one is opened, so that the runner refuses at the point.
func (c *checker) pool() error {
	line, ok := c.setLine("connections")
	if !ok {
		return nil
	}
	for _, pt := range c.s.Points() {
		_, o, err := c.s.configure(c.s.RunParams(pt))
		if err == nil {
			err = o.Validate(false)
		}
		if err == nil {
			continue
		}
		if label := c.s.Label(pt); label != "" {
			return c.errf(line, "at the point %s: %v", label, err)
		}
		return c.errf(line, "%v", err)
	}
	return nil
}

// clusterActions checks that a point that changes its cluster's primary
// (failover_at, switchover_at) runs on a cluster.
func (c *checker) clusterActions() error {
	for _, name := range []string{"failover_at", "switchover_at"} {
		line, ok := c.setLine(name)
		if !ok {
			continue
		}
		for _, pt := range c.s.Points() {
			_, o, err := c.s.configure(c.s.RunParams(pt))
			if err != nil || o.FailoverAt == 0 && o.SwitchoverAt == 0 {
				continue
			}
			if c.s.TopologyOf(pt).Replicas == 0 {
				at := ""
				if label := c.s.Label(pt); label != "" {
					at = " (at the point " + label + ")"
				}
				return c.errf(line, "%s changes a cluster's primary, and the run's server%s is one server: give the target or its build replicas (target: {managed: postgres, replicas: 2})", name, at)
			}
		}
	}
	return nil
}

// setLine is the line of the spec that sets name: in run, vary or
// follow; false where none does.
func (c *checker) setLine(name string) (int, bool) {
	for _, r := range c.s.Run {
		if r.Name == name {
			return r.line, true
		}
	}
	for _, v := range append(slices.Clone(c.s.Vary), c.s.Follow...) {
		if v.Name == name {
			return v.line, true
		}
	}
	return 0, false
}

// serversVaried refuses builds in target.servers that no point picks.
func (c *checker) serversVaried() error {
	s := c.s
	if len(s.Target.Servers) > 0 && !slices.ContainsFunc(append(slices.Clone(s.Vary), s.Follow...), func(v Vary) bool { return v.Name == ServerKey }) {
		return c.errf(s.Target.serversLine, "target.servers: nothing varies %s; add vary: {%s: [...]}, or give one build as pg_bin", ServerKey, ServerKey)
	}
	return nil
}

// baseline checks that the baseline names a value of a varied parameter.
func (c *checker) baseline() error {
	s := c.s
	for _, b := range s.Baseline {
		i := slices.IndexFunc(s.Vary, func(v Vary) bool { return v.Name == b.Name })
		if i < 0 {
			return c.errf(b.line, "baseline: %s is not a varied parameter (varied: %s)", b.Name, strings.Join(s.Varied(), ", "))
		}
		if !slices.Contains(s.Vary[i].Values, b.Value) {
			return c.errf(b.line, "baseline: %s=%s is not among the varied values (%s)", b.Name, b.Value, strings.Join(s.Vary[i].Values, ", "))
		}
	}
	return nil
}

// addRunDefaults fixes each timed runner parameter the spec neither fixes
// nor varies at the runner's default, so the sweep document shows what ran.
func (s *Spec) addRunDefaults(fixedWork bool) {
	for _, rp := range runner.Params {
		if !rp.Timed || rp.Act || fixedWork || slices.ContainsFunc(s.Run, func(r Param) bool { return r.Name == rp.Name }) ||
			slices.ContainsFunc(s.Vary, func(v Vary) bool { return v.Name == rp.Name }) ||
			slices.ContainsFunc(s.Follow, func(v Vary) bool { return v.Name == rp.Name }) {
			continue
		}
		s.Run = append(s.Run, Param{Name: rp.Name, Value: rp.Default})
	}
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
