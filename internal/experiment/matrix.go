package experiment

import (
	"maps"
	"strings"
	"time"
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

// ServerSettings are the settings a point's server starts with: the
// target's, overridden by the point's varied server settings.
func (s *Spec) ServerSettings(p Point) map[string]string {
	m := map[string]string{}
	for _, q := range s.Target.Settings {
		m[q.Name] = q.Value
	}
	for _, v := range s.Vary {
		if v.Kind == ServerParam {
			m[v.Name], _ = p.Get(v.Name)
		}
	}
	return m
}

// RunParams are a point's run parameters: the run section's, then the
// point's varied ones.
func (s *Spec) RunParams(p Point) []Param {
	out := append([]Param(nil), s.Run...)
	for _, v := range s.Vary {
		if v.Kind != ServerParam {
			val, _ := p.Get(v.Name)
			out = append(out, Param{Name: v.Name, Value: val})
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
	RunOverhead     = 5 * time.Second  // open, marks, document, cache drop
	RestartCost     = 3 * time.Second  // a server stop and start
	BuildPerWarehse = 15 * time.Second // a managed build, per warehouse
)

// Estimate is how long the runs order[from:] take, with the server
// restarts they need after the settings of the run before from (nil:
// the server is not running yet), and the build when build is set.
func (s *Spec) Estimate(points []Point, order [][2]int, from int, build bool) time.Duration {
	var total time.Duration
	if build {
		total += time.Duration(s.Warehouses()) * BuildPerWarehse
	}
	var prev map[string]string
	if from > 0 && from <= len(order) {
		prev = s.ServerSettings(points[order[from-1][0]])
	}
	for _, o := range order[from:] {
		p := points[o[0]]
		rp := s.RunParams(p)
		ramp, _ := time.ParseDuration(lookup(rp, "rampup"))
		dur, _ := time.ParseDuration(lookup(rp, "duration"))
		total += ramp + dur + RunOverhead
		if s.Target.Managed {
			if set := s.ServerSettings(p); prev == nil || !maps.Equal(prev, set) {
				total += RestartCost
				prev = set
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
	var prev map[string]string
	for _, o := range order {
		if set := s.ServerSettings(points[o[0]]); prev == nil || !maps.Equal(prev, set) {
			n++
			prev = set
		}
	}
	return n
}
