// Package server is what dbrig knows about a database server it manages
// itself: create it, start it with a set of settings, stop it, tell
// whether it is running or has crashed, and check before a sweep that it
// can take the settings the sweep asks for. Each kind of server (postgres,
// ...) lives in a package of its own and registers here, so that the
// generic layers never import a concrete one. What every kind does alike
// (its directory, binaries and user, the state file, start and stop
// around its own commands, status and crash reasons) is Managed, which
// each kind's Server embeds.
package server

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
)

// Server is one managed server, in a directory of its own.
type Server interface {
	// Attach finds, in the directory New was given, the server another
	// process left there, running or not, with the binaries, user,
	// settings and confinement it was started with; the directory must
	// hold one.
	Attach() error
	// Exists reports whether the cluster was created already (by Init).
	Exists() bool
	// Init creates the cluster; it does nothing when one exists.
	Init(ctx context.Context) error
	// Confine sets the confinement of the starts that follow (the zero
	// Confinement: none), after checking that this host can apply it; what
	// it cannot is a exitcode.UserError. Start then runs every process of
	// the server inside it, and Stop removes it.
	Confine(c Confinement) error
	// Start starts the server with settings by name, for this start only,
	// and returns once it accepts connections. A setting the server
	// rejects is a exitcode.UserError in the server's own words.
	Start(ctx context.Context, settings map[string]string) error
	// Stop shuts the server down cleanly; stopping a stopped server does
	// nothing. A server found dead returns an error wrapping ErrCrashed.
	Stop(ctx context.Context) error
	// Running reports whether Start succeeded and Stop has not yet run.
	Running() bool
	// Status reports the server's state as another process would see it.
	Status(ctx context.Context) (Status, error)
	// CreateDB creates a database; one that exists already is not an error.
	CreateDB(ctx context.Context, name string) error
	// URLFor is the URL of database db on the running server, which
	// dbtarget.Open accepts.
	URLFor(db string) string
	// LogPath is the server's log, kept across starts.
	LogPath() string
	// Version names the version of the server's binaries, as a person
	// would ("PostgreSQL 15.18 (Debian 15.18-0+deb12u1)").
	Version(ctx context.Context) (string, error)
	// DataFormat names the format of the data directory the binaries
	// read (a major version): builds of one format can run the same
	// cluster, builds of two cannot.
	DataFormat(ctx context.Context) (string, error)
	// CheckSettingNames refuses, in one line, names the server does not
	// know (a typo in a spec), without starting anything.
	CheckSettingNames(ctx context.Context, names []string) error
	// Preflight checks that the server and this host can take every set
	// of settings (one per sweep point), and names everything that is
	// missing, and why, in one error.
	Preflight(ctx context.Context, points []map[string]string) error
}

// DirectReader is a Server that can read its data files past the OS page
// cache (direct I/O), so that its own cache is the only one.
type DirectReader interface {
	// ReadsDirect reports whether the server reads its data that way when
	// started with settings.
	ReadsDirect(ctx context.Context, settings map[string]string) bool
}

// State is what Status found.
type State string

const (
	Running State = "running"
	Stopped State = "stopped"
	// Crashed: dbrig started the server and did not stop it, and it is gone.
	Crashed State = "crashed"
)

// ErrCrashed is what Stop wraps when it finds the server gone without a
// shutdown.
var ErrCrashed = errors.New("the server had crashed")

// Status describes a managed server, running or not.
type Status struct {
	State   State
	Version string // of the binaries, as Server.Version; "" when unknown
	BinDir  string
	PID     int // when crashed, the one that died
	// URL reaches the server's administrative database; empty unless
	// running. It holds no password.
	URL string
	// Socket is another address of the running server (a unix-socket URL).
	Socket string
	// Nodes are the URLs of each node of a running cluster, where URL
	// follows whichever is primary; nil for a server of its own.
	Nodes []string
	// Settings are those of the last start dbrig recorded.
	Settings map[string]string
	Started  time.Time // zero when unknown
	LogPath  string
	// Reason says why a crashed server is gone, from its log.
	Reason string
	// Confinement is that of the last start dbrig recorded; MemoryCgroup
	// is its memory cgroup's directory while running, "" when memory is
	// not confined.
	Confinement  Confinement
	MemoryCgroup string
}

// Kind is a kind of managed server, as its package registers it.
type Kind struct {
	Name string
	// Target is the target kind (see dbtarget.Register) its URLs open as.
	Target string
	// New returns the server in dir without touching it; binHint names
	// the directory of its binaries, "" to look in the usual places.
	New func(dir, binHint string) Server
	// Default marks the kind that a spec's `managed: true` and the server
	// command mean, from before there was more than one; one kind at most.
	Default bool
	// NewCluster returns a cluster of the kind in dir, of topology t,
	// without touching it; nil for a kind that makes no clusters.
	NewCluster func(dir, binHint string, t Topology) Cluster
	// HA names the HA managers that can keep the kind's clusters.
	HA []string
	// MultiMaster says the kind's clusters are nodes that all take writes
	// (Topology.Nodes), not a primary and its replicas.
	MultiMaster bool
}

var kinds = map[string]Kind{}

// Register adds a kind of server; called from the kind's package init.
// Registering a name twice is a programming error and panics.
func Register(k Kind) {
	if _, dup := kinds[k.Name]; dup {
		panic("server: kind " + k.Name + " registered twice")
	}
	if d := Default(); k.Default && d != "" {
		panic("server: kinds " + d + " and " + k.Name + " both claim to be the default")
	}
	kinds[k.Name] = k
}

// Default names the default kind, "" when no kind claims it (or none is
// registered, as on a host without managed servers).
func Default() string {
	for name, k := range kinds {
		if k.Default {
			return name
		}
	}
	return ""
}

// Kinds names the registered kinds, sorted.
func Kinds() []string {
	names := make([]string, 0, len(kinds))
	for name := range kinds {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the kind named name, or a one-line error naming the
// known ones.
func Lookup(name string) (Kind, error) {
	if k, ok := kinds[name]; ok {
		return k, nil
	}
	if len(kinds) == 0 {
		return Kind{}, exitcode.Userf("managed servers need a unix host; on this one, give the URL of a server you run")
	}
	if dbtarget.Embedded(name) {
		return Kind{}, exitcode.Userf("%s runs inside dbrig: there is no server of it to start, nor a cluster; its target is a file (--target %s:PATH)", name, name)
	}
	return Kind{}, exitcode.Userf("unknown server kind %q (known: %s)", name, strings.Join(Kinds(), ", "))
}

// New returns a server of kind in dir; see Kind.New.
func New(kind, dir, binHint string) (Server, error) {
	k, err := Lookup(kind)
	if err != nil {
		return nil, err
	}
	return k.New(dir, binHint), nil
}

// Attach returns the server of kind that dbrig manages in dir.
func Attach(kind, dir string) (Server, error) {
	k, err := Lookup(kind)
	if err != nil {
		return nil, err
	}
	s := k.New(dir, "")
	if err := s.Attach(); err != nil {
		return nil, err
	}
	return s, nil
}

// NewCluster returns a cluster of kind in dir, of topology t; see
// Kind.NewCluster and CheckCluster.
func NewCluster(kind, dir, binHint string, t Topology) (Cluster, error) {
	if err := CheckCluster(kind, t); err != nil {
		return nil, err
	}
	return kinds[kind].NewCluster(dir, binHint, t), nil
}

// CheckCluster refuses, in one line, a cluster of kind and topology t
// that cannot be: a kind without clusters, or without clusters of that
// shape, an HA manager it cannot be kept by, a topology that is not one.
func CheckCluster(kind string, t Topology) error {
	k, err := Lookup(kind)
	if err != nil {
		return err
	}
	if err := t.Check(); err != nil {
		return err
	}
	switch {
	case k.NewCluster == nil:
		return exitcode.Userf("dbrig makes no %s clusters yet: --replicas, --nodes and the other cluster flags are for --kind %s", kind, strings.Join(clusterKinds(), ", "))
	case t.Nodes > 0 && !k.MultiMaster:
		return exitcode.Userf("--nodes N makes a multi-master cluster, which %s has not: give --replicas N for a primary and its replicas", kind)
	case t.Replicas > 0 && k.MultiMaster:
		return exitcode.Userf("--replicas N makes a primary and its replicas, and a %s cluster's nodes all take writes: give --nodes N", kind)
	case t.HA != "" && !slices.Contains(k.HA, t.HA):
		return exitcode.Userf("--ha %s: a %s cluster can be kept by %s", t.HA, kind, strings.Join(append([]string{"dbrig itself (no --ha)"}, k.HA...), " or "))
	}
	return nil
}

// clusterKinds names the kinds that make clusters.
func clusterKinds() []string {
	var out []string
	for _, name := range Kinds() {
		if kinds[name].NewCluster != nil {
			out = append(out, name)
		}
	}
	return out
}

// AttachDir returns the server dbrig manages in dir, of the kind its
// state file records (a cluster where it records a topology); a
// directory from before kinds were recorded holds the default kind's.
func AttachDir(dir string) (Server, error) {
	rec, err := ReadState(dir)
	if err != nil || rec.Topology == nil {
		return Attach(kindIn(dir), dir)
	}
	c, err := NewCluster(rec.Kind, dir, "", *rec.Topology)
	if err != nil {
		return nil, err
	}
	if err := c.Attach(); err != nil {
		return nil, err
	}
	return c, nil
}
