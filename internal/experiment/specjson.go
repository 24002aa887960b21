package experiment

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/server"
)

// orderedJSON writes params as a JSON object in their order, so that the
// spec kept in the sweep document parses back to the same spec.
type orderedJSON []Param

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	return objectInOrder(o, func(p Param) (string, any) { return p.Name, p.Value })
}

// orderedBuilds are target.servers, for a target whose kind is kind
// and cluster topo.
type orderedBuilds struct {
	builds []Build
	kind   string
	topo   server.Topology
}

// MarshalJSON writes the builds as the spec did: each its binaries'
// directory alone, or mappings when one has a kind, settings or a
// cluster of its own.
func (o orderedBuilds) MarshalJSON() ([]byte, error) {
	own := func(b Build) bool { return b.ownTopology || b.Topology != o.topo }
	plain := !slices.ContainsFunc(o.builds, func(b Build) bool { return b.Kind != o.kind || len(b.Settings) > 0 || own(b) })
	return objectInOrder(o.builds, func(b Build) (string, any) {
		if plain {
			return b.Name, b.Bin
		}
		var t topologyJSON
		if own(b) {
			t = newTopologyJSON(b.Topology, true)
		}
		return b.Name, struct {
			Managed  string      `json:"managed"`
			Bin      string      `json:"bin,omitempty"`
			Settings orderedJSON `json:"settings,omitempty"`
			topologyJSON
		}{b.Kind, b.Bin, b.Settings, t}
	})
}

// topologyJSON is a cluster's keys (topologyKeys), as a spec writes them.
type topologyJSON struct {
	Replicas     string `json:"replicas,omitempty"`
	SyncReplicas string `json:"sync_replicas,omitempty"`
	Nodes        string `json:"nodes,omitempty"`
	HA           string `json:"ha,omitempty"`
	ReplicaDelay string `json:"replica_delay,omitempty"`
	TTL          string `json:"ttl,omitempty"`
	LoopWait     string `json:"loop_wait,omitempty"`
}

// newTopologyJSON is t's keys; explicit writes replicas even when there
// are none, for a build that is one server beside a target's cluster.
func newTopologyJSON(t server.Topology, explicit bool) topologyJSON {
	n := func(v int) string {
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	replicas := n(t.Replicas)
	if explicit {
		replicas = strconv.Itoa(t.Replicas)
	}
	d := func(v time.Duration) string {
		if v == 0 {
			return ""
		}
		return v.String()
	}
	return topologyJSON{replicas, n(t.SyncReplicas), n(t.Nodes), t.HA, d(t.ReplicaDelay), d(t.TTL), d(t.LoopWait)}
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
		topologyJSON
	}
	memory, _ := s.Target.Confine(MemoryParam)
	cpus, _ := s.Target.Confine(CPUsParam)
	var servers *orderedBuilds
	if len(s.Target.Servers) > 0 {
		servers = &orderedBuilds{s.Target.Servers, s.Target.Server, s.Target.Topology}
	}
	v := struct {
		Name       string        `json:"name"`
		Target     targetJSON    `json:"target"`
		Workload   string        `json:"workload"`
		Build      orderedJSON   `json:"build,omitempty"`
		Run        orderedJSON   `json:"run"`
		Vary       orderedVary   `json:"vary"`
		Follow     orderedFollow `json:"follow,omitempty"`
		Baseline   orderedJSON   `json:"baseline,omitempty"`
		Repeat     int           `json:"repeat"`
		With       orderedJSON   `json:"with,omitempty"`
		Thresholds []string      `json:"thresholds,omitempty"`
	}{s.Name, targetJSON{s.Target.Server, s.Target.Settings, s.Target.PGBin, servers, memory, cpus, dbtarget.Redact(s.Target.URL), newTopologyJSON(s.Target.Topology, false)},
		s.Workload, s.Build, s.Run, s.Vary, s.Follow, s.Baseline, s.Repeat, s.With, s.ThresholdExprs()}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // strings and ints only
	}
	return b
}
