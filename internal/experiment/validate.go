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
