package experiment

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/server"
)

// ServerBuild is one set of a managed server's binaries that a sweep
// runs, and the server, untouched, that runs them on the build's cluster.
type ServerBuild struct {
	// Name is the build's in target.servers; "" for a sweep's one build.
	Name    string
	Server  server.Server
	Version string
	// Dir is the cluster's directory. Builds of one data format share it,
	// so its schema is built once for all of them.
	Dir string
	// Err says why the binaries cannot be used (missing, no version).
	Err error
}

// ServerBuilds are the builds a managed sweep's points run, in the order
// of target.servers. A sweep without servers keeps its one cluster in
// DIR/server; otherwise each data format gets DIR/server-NAME, after its
// first build, so that a build that cannot read another's cluster gets
// its own, built from the same seed.
func (s *Sweep) ServerBuilds(ctx context.Context) ([]ServerBuild, error) {
	t := s.Spec.Target
	if len(t.Servers) == 0 {
		b, err := newBuild(ctx, t.Server, "", filepath.Join(s.Dir, "server"), t.PGBin, t.Topology)
		return []ServerBuild{b}, err
	}
	used := map[string]bool{}
	for _, p := range s.Points {
		used[s.Spec.BuildOf(p)] = true
	}
	var builds []ServerBuild
	// Builds of one kind, data format and topology share a directory.
	type shared struct {
		kind, format string
		topo         server.Topology
	}
	clusters := map[shared]string{}
	for _, bin := range t.Servers {
		if !used[bin.Name] {
			continue
		}
		own := filepath.Join(s.Dir, "server-"+bin.Name)
		b, err := newBuild(ctx, bin.Kind, bin.Name, own, bin.Bin, bin.Topology)
		if err != nil {
			return nil, err
		}
		format := ""
		if b.Err == nil {
			format, b.Err = b.Server.DataFormat(ctx)
		}
		key := shared{bin.Kind, format, bin.Topology}
		if dir, ok := clusters[key]; ok && b.Err == nil {
			// The kind was looked up by newBuild already.
			b.Server, _ = newServer(bin.Kind, dir, bin.Bin, bin.Topology)
			b.Dir = dir
		} else if b.Err == nil {
			clusters[key] = own
		}
		builds = append(builds, b)
	}
	return builds, nil
}

// newBuild is the server of kind in dir running the binaries in bin, a
// cluster of topo where it is not zero; a build whose version cannot be
// read has Err set.
func newBuild(ctx context.Context, kind, name, dir, bin string, topo server.Topology) (ServerBuild, error) {
	srv, err := newServer(kind, dir, bin, topo)
	if err != nil {
		return ServerBuild{}, err
	}
	b := ServerBuild{Name: name, Server: srv, Dir: dir}
	b.Version, b.Err = srv.Version(ctx)
	return b, nil
}

// newServer is the server of kind in dir, a cluster of topo where it is
// not zero.
func newServer(kind, dir, bin string, topo server.Topology) (server.Server, error) {
	if topo.IsZero() {
		return server.New(kind, dir, bin)
	}
	return server.NewCluster(kind, dir, bin, topo)
}

// UsableServerBuilds are ServerBuilds, or a one-line refusal naming each
// build whose binaries cannot be used and what is missing.
func (s *Sweep) UsableServerBuilds(ctx context.Context) ([]ServerBuild, error) {
	builds, err := s.ServerBuilds(ctx)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, b := range builds {
		if b.Err == nil {
			continue
		}
		if b.Name == "" {
			return nil, b.Err
		}
		bad = append(bad, b.Name+": "+human.OneLine(b.Err))
	}
	if len(bad) > 0 {
		return nil, exitcode.Userf("%s: target.servers: %s", s.Spec.File, strings.Join(bad, "; "))
	}
	return builds, nil
}

// build is the point's build.
func (r *run) build(p Point) ServerBuild {
	name := r.Spec.BuildOf(p)
	return r.builds[slices.IndexFunc(r.builds, func(b ServerBuild) bool { return b.Name == name })]
}

// ServerSettingNames are the names of every server setting the sweep
// asks of build (one of target.servers, "" when it names none), for a
// check of names that starts nothing.
func (s *Sweep) ServerSettingNames(build string) []string {
	names := map[string]bool{}
	for _, p := range s.Points {
		if s.Spec.BuildOf(p) != build {
			continue
		}
		for name := range s.Spec.ServerSettings(p) {
			names[name] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}
