// Package experiment runs studies: a YAML spec names a workload, a target
// and the parameters to vary; the package expands the matrix, runs every
// point in an interleaved order of repetitions, and keeps the statistics
// in a sweep document beside each run's own document.
package experiment

import (
	"slices"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/workload"
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
	// Topology makes the managed server a cluster (target: {replicas: N,
	// ...}); a build of target.servers may have its own.
	Topology server.Topology
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
	// Topology is the build's cluster, the target's unless the build
	// names one of its own (ownTopology: it set a cluster's key, if only
	// replicas: 0, one server).
	Topology    server.Topology
	ownTopology bool
	line        int
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
	// Thresholds are the expectations every run is held to (see
	// result.Threshold); thresholdsWritten are as the spec wrote them.
	Thresholds        []result.Threshold
	thresholdsWritten []Param
}

// AuditKey is the run parameter that has every run log what the database
// acknowledged and audit it after the run, as dbrig run
// --audit-durability does.
const AuditKey = "audit_durability"

// Audits tells whether every run is audited for durability.
func (s *Spec) Audits() bool { return lookup(s.Run, AuditKey) == "true" }

// Prewarm values.
const (
	PrewarmNone = "none"
	PrewarmFull = "full"
)

// Info is what the sweep's runs declare: the workload's metrics, and
// those of the workloads it runs with.
func (s *Spec) Info() workload.Info {
	return workload.MixInfo(s.workloads())
}

// workloads are the sweep's workload and those it runs with, in order.
func (s *Spec) workloads() []workload.Workload {
	w, _ := workload.New(s.Workload)
	ws := []workload.Workload{w}
	for _, g := range s.With {
		o, _ := workload.New(g.Name) // checked with the spec
		ws = append(ws, o)
	}
	return ws
}

// Varied names the varied parameters in the spec's order.
func (s *Spec) Varied() []string {
	names := make([]string, len(s.Vary))
	for i, v := range s.Vary {
		names[i] = v.Name
	}
	return names
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
