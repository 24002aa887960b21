package experiment

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/workload"
	"github.com/spf13/pflag"
)

// Point is one combination of the varied values.
type Point struct {
	// Params are the varied values in the spec's order.
	Params []Param
}

// Get returns the point's value of a varied parameter.
func (p Point) Get(name string) (string, bool) {
	for _, q := range p.Params {
		if q.Name == name {
			return q.Value, true
		}
	}
	return "", false
}

// Map is Params as a map, as the sweep document keeps them.
func (p Point) Map() map[string]string {
	m := make(map[string]string, len(p.Params))
	for _, q := range p.Params {
		m[q.Name] = q.Value
	}
	return m
}

// Label is "shared_buffers=1GB vus=4".
func (p Point) Label() string {
	parts := make([]string, len(p.Params))
	for i, q := range p.Params {
		parts[i] = q.Name + "=" + q.Value
	}
	return strings.Join(parts, " ")
}

// Points expands the matrix: the product of the vary lists, the first
// key outermost. A spec that varies nothing has one point.
func (s *Spec) Points() []Point {
	points := []Point{{}}
	for _, v := range s.Vary {
		next := make([]Point, 0, len(points)*len(v.Values))
		for _, p := range points {
			for _, val := range v.Values {
				params := append(append([]Param(nil), p.Params...), Param{Name: v.Name, Value: val})
				next = append(next, Point{Params: params})
			}
		}
		points = next
	}
	return points
}

// Order interleaves the repetitions: every point once, then every point
// again, so drift over time spreads over all points instead of landing
// on the last ones. Each entry is (point index, repetition), 0-based point
// and 1-based repetition.
func Order(points, repeat int) [][2]int {
	order := make([][2]int, 0, points*repeat)
	for rep := 1; rep <= repeat; rep++ {
		for p := range points {
			order = append(order, [2]int{p, rep})
		}
	}
	return order
}

// BaselineOf returns the index of the point that points[i] is compared
// with: its own values with the baseline's substituted. It returns -1
// when the spec has no baseline or points[i] is the baseline itself.
func (s *Spec) BaselineOf(points []Point, i int) int {
	if len(s.Baseline) == 0 {
		return -1
	}
	want := points[i].Map()
	for _, b := range s.Baseline {
		want[b.Name] = b.Value
	}
	if maps.Equal(want, points[i].Map()) {
		return -1
	}
	for j, p := range points {
		if maps.Equal(want, p.Map()) {
			return j
		}
	}
	return -1
}

// IsBaseline tells whether a point holds the baseline's values.
func (s *Spec) IsBaseline(p Point) bool {
	if len(s.Baseline) == 0 {
		return false
	}
	for _, b := range s.Baseline {
		if v, _ := p.Get(b.Name); v != b.Value {
			return false
		}
	}
	return true
}

// setting is one parameter's value at a point, varied or following.
type setting struct {
	Param
	kind ParamKind
}

// settings are a point's varied parameters and those that follow them.
func (s *Spec) settings(p Point) []setting {
	var out []setting
	for _, v := range s.Vary {
		val, _ := p.Get(v.Name)
		out = append(out, setting{Param{Name: v.Name, Value: val}, v.Kind})
	}
	for _, f := range s.Follow {
		lead, _ := p.Get(f.Follows)
		leader := s.Vary[slices.IndexFunc(s.Vary, func(v Vary) bool { return v.Name == f.Follows })]
		out = append(out, setting{Param{Name: f.Name, Value: f.Values[slices.Index(leader.Values, lead)]}, f.Kind})
	}
	return out
}

// Following are the values a point's following parameters take.
func (s *Spec) Following(p Point) []Param {
	var out []Param
	for _, st := range s.settings(p)[len(s.Vary):] {
		out = append(out, st.Param)
	}
	return out
}

// Label is the point's label with the values that follow its own:
// "shared_buffers=64MB prewarm=none memory=320MB".
func (s *Spec) Label(p Point) string {
	return Point{Params: append(slices.Clone(p.Params), s.Following(p)...)}.Label()
}

// ServerSettings are the settings a point's server starts with: the
// target's, overridden by the point's varied or following ones.
func (s *Spec) ServerSettings(p Point) map[string]string {
	m := map[string]string{}
	for _, q := range s.Target.Settings {
		m[q.Name] = q.Value
	}
	build := s.BuildOf(p)
	for _, b := range s.Target.Servers {
		if b.Name == build {
			for _, q := range b.Settings {
				m[q.Name] = q.Value
			}
		}
	}
	for _, st := range s.settings(p) {
		if st.kind == ServerParam {
			m[st.Name] = st.Value
		}
	}
	return m
}

// Confinement is what a point's server is confined to: the target's,
// overridden by the point's varied or following memory or cpus.
func (s *Spec) Confinement(p Point) server.Confinement {
	c := s.Target.Confinement
	for _, st := range s.settings(p) {
		if st.kind == ConfineParam {
			_ = setConfinement(&c, st.Name, st.Value) // checked by Parse
		}
	}
	return c
}

// BuildOf names the build of target.servers a point's server runs;
// "" when the spec names none.
func (s *Spec) BuildOf(p Point) string {
	for _, st := range s.settings(p) {
		if st.kind == BinParam {
			return st.Value
		}
	}
	return ""
}

// KindOf is the kind of server that build (of target.servers; "" for
// the one build) runs.
func (s *Spec) KindOf(build string) string {
	for _, b := range s.Target.Servers {
		if b.Name == build {
			return b.Kind
		}
	}
	return s.Target.Server
}

// TopologyOf is the point's server's cluster: its build's, or the
// target's; the zero Topology for one server or a target of a URL.
func (s *Spec) TopologyOf(p Point) server.Topology {
	name := s.BuildOf(p)
	for _, b := range s.Target.Servers {
		if b.Name == name {
			return b.Topology
		}
	}
	return s.Target.Topology
}

// serverStart is what a point's server starts with; a point that differs
// from the one before in any of it restarts the server.
type serverStart struct {
	build    string
	settings map[string]string
	confined server.Confinement
}

func (s *Spec) serverStart(p Point) *serverStart {
	return &serverStart{s.BuildOf(p), s.ServerSettings(p), s.Confinement(p)}
}

// same tells whether a server started as a runs as b would; a nil a is
// a server not yet started.
func (a *serverStart) same(b *serverStart) bool {
	return a != nil && a.build == b.build && maps.Equal(a.settings, b.settings) && a.confined == b.confined
}

// RunParams are a point's run parameters: the run section's, then the
// point's varied or following ones.
func (s *Spec) RunParams(p Point) []Param {
	out := append([]Param(nil), s.Run...)
	for _, st := range s.settings(p) {
		if st.kind == RunParam || st.kind == PrewarmParam {
			out = append(out, st.Param)
		}
	}
	return out
}

func lookup(params []Param, name string) string {
	for _, p := range params {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// Estimates behind --dry-run and the time left.
const (
	RunOverhead = 5 * time.Second // open, marks, document, cache drop
	RestartCost = 3 * time.Second // a server stop and start
)

// configure is a fresh workload with run parameters applied: its own
// flags set, and the runner's options parsed.
func (s *Spec) configure(params []Param) (workload.Workload, runner.Options, error) {
	w, _ := workload.New(s.Workload)
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	w.RunFlags(fs)
	o := runner.Defaults()
	o.Beside = s.beside()
	for _, p := range params {
		var err error
		if _, ok := runner.Lookup(p.Name); ok {
			err = o.Set(p.Name, p.Value)
		} else if p.Name != "prewarm" && p.Name != AuditKey {
			err = setFlag(fs, p.Name, p.Value)
		}
		if err != nil {
			return nil, o, exitcode.Userf("%s: %v", p.Name, err)
		}
	}
	return w, o, nil
}

// beside is how many virtual users the spec's with: workloads run.
func (s *Spec) beside() int {
	n := 0
	for _, g := range s.With {
		vus, _ := strconv.Atoi(g.Value) // checked with the spec
		n += vus
	}
	return n
}

// builder is a fresh workload with the build parameters applied, and its
// build; b is nil when the workload has none.
func (s *Spec) builder() (w workload.Workload, b workload.Builder, err error) {
	w, _ = workload.New(s.Workload)
	b, ok := w.(workload.Builder)
	if !ok {
		return w, nil, nil
	}
	fs := pflag.NewFlagSet("build", pflag.ContinueOnError)
	b.BuildFlags(fs)
	for _, p := range s.Build {
		if err := setFlag(fs, p.Name, p.Value); err != nil {
			return w, nil, exitcode.Userf("build.%s: %v", p.Name, err)
		}
	}
	return w, b, nil
}

// Builds tells whether the workload has a schema to build.
func (s *Spec) Builds() bool {
	_, b, _ := s.builder()
	return b != nil
}

// runTime is how long one run of point p takes: its window, or what the
// workload estimates for a fixed amount of work.
func (s *Spec) runTime(p Point) time.Duration {
	w, o, err := s.configure(s.RunParams(p))
	if err != nil {
		return 0
	}
	if !w.Info().FixedWork {
		return o.Rampup + o.Duration
	}
	if e, ok := w.(workload.RunEstimator); ok {
		return e.RunTime()
	}
	return 0
}

// Estimate is how long the runs order[from:] take, with the server
// restarts they need after the settings of the run before from (nil:
// the server is not running yet), and builds builds of the schema (one
// per cluster not yet built).
func (s *Spec) Estimate(points []Point, order [][2]int, from int, builds int) time.Duration {
	var total time.Duration
	if _, b, err := s.builder(); err == nil {
		if e, ok := b.(workload.BuildEstimator); ok {
			total += time.Duration(builds) * e.BuildTime()
		}
	}
	var prev *serverStart
	if from > 0 && from <= len(order) {
		prev = s.serverStart(points[order[from-1][0]])
	}
	for _, o := range order[from:] {
		p := points[o[0]]
		total += s.runTime(p) + RunOverhead
		if s.Target.Managed {
			if start := s.serverStart(p); !prev.same(start) {
				total += RestartCost
				prev = start
			}
		}
	}
	return total
}

// Restarts counts the server starts the runs order[from:] need.
func (s *Spec) Restarts(points []Point, order [][2]int) int {
	if !s.Target.Managed {
		return 0
	}
	n := 0
	var prev *serverStart
	for _, o := range order {
		if start := s.serverStart(points[o[0]]); !prev.same(start) {
			n++
			prev = start
		}
	}
	return n
}
