//go:build unix

package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
)

var (
	_ server.Cluster    = (*Cluster)(nil)
	_ server.Progresser = (*Cluster)(nil)
)

// Cluster is a PostgreSQL primary and its streaming replicas, all managed
// by dbrig in one directory: each node a server of its own in Dir/nodeN
// (its data, log, socket and state, as a Server keeps them), the
// cluster's state in Dir/cluster.json and Dir/dbrig-server.json, and the
// password file every node's URL names in Dir/pgpass. Every replica
// streams from the primary through a replication slot of its own, so
// the primary keeps the WAL a replica has not yet received.
//
// Without an HA manager dbrig keeps the cluster itself: it makes the
// replicas (pg_basebackup), and promotes one only when told (Failover,
// Switchover). With Patroni (Topology.HA), an etcd and one Patroni per
// node keep it, and promote a replica themselves, as in production.
// Every node keeps a server's access rules: passwords (scram-sha-256)
// for every role, the socket's directory the server user's alone, and
// listening on loopback and on the cluster's own network only.
type Cluster struct {
	dir, bin string
	topo     server.Topology

	mu    sync.Mutex
	st    clusterState
	nodes []*Server
	keep  keeper
	// net is the cluster's own network, where its replicas are at a
	// distance (Topology.ReplicaDelay); nil without one.
	net *server.Net
	// running says this process started the cluster, or found it running.
	running bool
	// say tells what a start does, as it does it; nil says nothing.
	say func(string)
}

// SetProgress has the cluster tell say what a start does.
func (c *Cluster) SetProgress(say func(string)) { c.say = say }

// tell says what the cluster does now, to whoever asked.
func (c *Cluster) tell(format string, args ...any) {
	if c.say != nil {
		c.say(fmt.Sprintf(format, args...))
	}
}

// clusterState is Dir/cluster.json: what the nodes are and which is
// primary, for another process to find them.
type clusterState struct {
	// Primary names the node that is primary, as dbrig last made or
	// found it.
	Primary string      `json:"primary"`
	Nodes   []nodeState `json:"nodes"`
	// Etcd is the HA manager's store, where there is one.
	Etcd *etcdState `json:"etcd,omitempty"`
	// Settings are those of the last start, for every node.
	Settings map[string]string `json:"settings,omitempty"`
}

// nodeState is one node as the cluster records it.
type nodeState struct {
	Name string `json:"name"`
	Port int    `json:"port"`
	// Lost marks the node a failover left behind: its data may hold
	// what the new primary never had, so the next start makes it again
	// from the primary.
	Lost bool `json:"lost,omitempty"`
	// Patroni is the node's HA manager, where there is one, and API its
	// REST API's port.
	Patroni *server.Daemon `json:"patroni,omitempty"`
	API     int            `json:"api_port,omitempty"`
}

// keeper is who keeps the cluster: dbrig itself (replicas.go) or an HA
// manager (patroni.go).
type keeper interface {
	// start starts every node (making what is missing), the primary
	// first, with settings, and returns once every replica streams.
	start(ctx context.Context, settings map[string]string) error
	stop(ctx context.Context) error
	// failover loses the primary as a lost machine would, and returns
	// the name of the node that is primary after it.
	failover(ctx context.Context, note func(string)) (string, error)
	switchover(ctx context.Context, note func(string)) (string, error)
	// describe adds what the keeper knows of each node to what the nodes
	// said themselves.
	describe(ctx context.Context, nodes []server.Node)
}

// NewCluster is the cluster in dir of topology t, run from the binaries
// in binDir ("": see FindBinDir); nothing is touched yet.
func NewCluster(dir, binDir string, t server.Topology) *Cluster {
	c := &Cluster{dir: dir, bin: binDir, topo: t}
	for i := range t.Replicas + 1 {
		c.st.Nodes = append(c.st.Nodes, nodeState{Name: nodeName(i)})
	}
	c.st.Primary = c.st.Nodes[0].Name
	c.bindNodes()
	if t.HA == HAPatroni {
		c.keep = &patroni{c: c}
	} else {
		c.keep = &replicas{c: c}
	}
	return c
}

// nodeName is the i-th node's, and its directory's, name.
func nodeName(i int) string { return "node" + strconv.Itoa(i+1) }

// bindNodes makes the nodes' servers for the state's nodes, on the
// cluster's network where it has one: the first node in the host's
// namespace, at the bridge's address, and each replica in a space of
// its own, at its distance.
func (c *Cluster) bindNodes() {
	c.nodes = make([]*Server, len(c.st.Nodes))
	for i, n := range c.st.Nodes {
		s := New(filepath.Join(c.dir, n.Name), c.bin)
		s.peer = &peering{name: n.Name}
		switch {
		case c.net == nil:
		case i == 0:
			s.peer.at = c.net.Host.String()
			s.peer.listen = []string{s.peer.at}
		default:
			space := i - 1
			s.peer.at = c.net.Spaces[space].Addr.String()
			s.peer.listen = []string{s.peer.at}
			s.peer.start = func(fn func() error) error { return c.net.In(space, fn) }
			s.peer.delay = c.net.Spaces[space].Delay
		}
		if n.Port != 0 {
			s.Live.Fix(n.Port)
		}
		c.nodes[i] = s
	}
}

// makeNet makes the cluster's network, where its topology puts the
// replicas at a distance: a space a replica, each delayed as far.
func (c *Cluster) makeNet() error {
	if c.topo.ReplicaDelay == 0 {
		return nil
	}
	delays := make([]time.Duration, c.topo.Replicas)
	for i := range delays {
		delays[i] = c.topo.ReplicaDelay
	}
	n, err := server.MakeNet(c.dir, server.NetSpec{Spaces: c.topo.Replicas, Delay: delays})
	if err != nil {
		return err
	}
	c.net = n
	c.bindNodes()
	return nil
}

// removeNet removes the cluster's network, once no node runs in it.
func (c *Cluster) removeNet() error {
	if c.net == nil {
		return nil
	}
	err := c.net.Remove()
	c.net = nil
	c.bindNodes()
	return err
}

// statePath is Dir/cluster.json.
func (c *Cluster) statePath() string { return filepath.Join(c.dir, "cluster.json") }

func (c *Cluster) writeState() error { return server.WriteJSON(c.statePath(), c.st) }

func (c *Cluster) readState() error {
	var st clusterState
	if err := server.ReadJSON(c.statePath(), &st); err != nil {
		return err
	}
	if len(st.Nodes) != c.topo.Replicas+1 {
		return fmt.Errorf("%s: %d nodes, and the topology says %d", c.statePath(), len(st.Nodes), c.topo.Replicas+1)
	}
	c.st = st
	c.bindNodes()
	return nil
}

// node is the node named name.
func (c *Cluster) node(name string) (*Server, *nodeState) {
	for i := range c.st.Nodes {
		if c.st.Nodes[i].Name == name {
			return c.nodes[i], &c.st.Nodes[i]
		}
	}
	return nil, nil
}

// primary is the node that is primary.
func (c *Cluster) primary() *Server {
	s, _ := c.node(c.st.Primary)
	return s
}

// Dir is where the cluster lives.
func (c *Cluster) Dir() string { return c.dir }

// Topology is the shape the cluster was made with.
func (c *Cluster) Topology() server.Topology { return c.topo }

// resolve makes Dir absolute and finds the binaries, once.
func (c *Cluster) resolve() error {
	abs, err := filepath.Abs(c.dir)
	if err != nil {
		return err
	}
	if abs != c.dir {
		c.dir = abs
		c.bindNodes()
	}
	bin, err := c.nodes[0].Bin()
	if err != nil {
		return err
	}
	if c.bin == "" {
		c.bin = bin
		c.bindNodes()
	}
	return nil
}

// Exists reports whether the cluster was made: its primary's data is there.
func (c *Cluster) Exists() bool {
	if _, err := os.Stat(c.statePath()); err != nil {
		return false
	}
	return c.primary().Exists()
}

// Init gives each node a port of its own and records the cluster. The
// nodes' data is made at the first start: a replica's is a copy of the
// running primary's.
func (c *Cluster) Init(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.resolve(); err != nil {
		return err
	}
	if _, err := os.Stat(c.statePath()); err == nil {
		return c.readState()
	}
	if entries, err := os.ReadDir(c.dir); err == nil && len(entries) > 0 {
		return exitcode.Userf("%s holds something else than a dbrig cluster: give an empty or new directory for one", c.dir)
	}
	if c.topo.ReplicaDelay > 0 {
		if err := server.NetSupported(); err != nil {
			return exitcode.Userf("--replica-delay: %v", err)
		}
	}
	if c.topo.HA == HAPatroni {
		if _, _, err := haBinaries(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	for i := range c.st.Nodes {
		port, err := server.FreeLoopbackPort()
		if err != nil {
			return err
		}
		c.st.Nodes[i].Port = port
		if c.topo.HA != "" {
			if c.st.Nodes[i].API, err = server.FreeLoopbackPort(); err != nil {
				return err
			}
		}
	}
	c.bindNodes()
	return c.writeState()
}

// Confine refuses a confinement (server.ConfineNodes).
func (c *Cluster) Confine(conf server.Confinement) error { return server.ConfineNodes(conf) }

// Attach finds the cluster in Dir as another process left it.
func (c *Cluster) Attach() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attach()
}

// attach reads the cluster's state and finds its nodes as they are now:
// another process (a run's failover) may have changed them since this
// one last looked.
func (c *Cluster) attach() error {
	if err := c.resolve(); err != nil {
		return err
	}
	if err := c.readState(); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return exitcode.Userf("no dbrig cluster in %s: start one with dbrig server start --replicas N --dir %s", c.dir, c.dir)
		}
		return err
	}
	if rec, err := server.ReadState(c.dir); err == nil && rec.BinDir != "" {
		c.bin = rec.BinDir
	}
	if n, err := server.LoadNet(c.dir); err == nil {
		c.net = n
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	c.bindNodes()
	for _, s := range c.nodes {
		if s.Exists() {
			if err := s.Attach(); err != nil {
				return err
			}
		}
	}
	c.running = c.primary().Running()
	return nil
}

// Start starts every node with settings, making what is missing: the
// primary's data at the first start, and a replica's from the running
// primary. It returns once every replica streams.
func (c *Cluster) Start(ctx context.Context, settings map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return fmt.Errorf("the cluster in %s is already running", c.dir)
	}
	if err := c.resolve(); err != nil {
		return err
	}
	if err := c.readState(); err != nil {
		return fmt.Errorf("no cluster in %s: call Init first (%w)", c.dir, err)
	}
	c.st.Settings = settings
	if err := c.makeNet(); err != nil {
		return err
	}
	if err := c.keep.start(ctx, settings); err != nil {
		// What started is stopped: a half-started cluster would hold its
		// ports and its data for no one.
		_ = c.keep.stop(context.WithoutCancel(ctx))
		_ = c.removeNet()
		return err
	}
	c.running = true
	if err := c.writeState(); err != nil {
		return err
	}
	return c.writeRecord(ctx, true)
}

// writeRecord keeps the cluster's record in Dir, for server.AttachDir.
func (c *Cluster) writeRecord(ctx context.Context, running bool) error {
	t, p := c.topo, c.primary()
	rec := &server.Record{Kind: Kind, BinDir: c.bin, RunAs: p.Host.User, Settings: c.st.Settings, Topology: &t}
	return server.WriteClusterRecord(ctx, c.dir, rec, running, p.Version)
}

// Stop stops every node, the primary first, so that the replicas receive
// everything up to its shutdown.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return err
	}
	err := c.keep.stop(ctx)
	c.running = false
	return errors.Join(err, c.removeNet(), c.writeState(), c.writeRecord(ctx, false))
}

// Running reports whether the cluster was started or found running.
func (c *Cluster) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// Status is the primary's, with the URLs that follow whichever node is
// primary.
func (c *Cluster) Status(ctx context.Context) (server.Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return server.Status{}, err
	}
	st, err := c.primary().Status(ctx)
	if err != nil {
		return st, err
	}
	st.Settings = c.st.Settings
	if st.State == server.Running {
		st.URL = c.urlFor("postgres")
		for i, s := range c.nodes {
			st.Nodes = append(st.Nodes, s.urlAt("postgres", c.st.Nodes[i].Port))
		}
	}
	return st, nil
}

// Nodes reports every node: its role, where its log is, and how far
// behind the primary a replica is.
func (c *Cluster) Nodes(ctx context.Context) ([]server.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return nil, err
	}
	out := make([]server.Node, len(c.nodes))
	for i, s := range c.nodes {
		out[i] = c.describeNode(ctx, s, c.st.Nodes[i])
	}
	lagOf(ctx, c.primary(), out)
	c.keep.describe(ctx, out)
	return out, nil
}

// Failover loses the primary as a lost machine would and returns once
// another node is primary.
func (c *Cluster) Failover(ctx context.Context, note func(string)) (server.Node, error) {
	return c.handOver(ctx, note, c.keep.failover)
}

// Switchover hands the primary's role to another node, planned.
func (c *Cluster) Switchover(ctx context.Context, note func(string)) (server.Node, error) {
	return c.handOver(ctx, note, c.keep.switchover)
}

// handOver runs a keeper's change of primary and reports the node that
// is primary after it.
func (c *Cluster) handOver(ctx context.Context, note func(string), change func(context.Context, func(string)) (string, error)) (server.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return server.Node{}, err
	}
	if !c.running {
		return server.Node{}, exitcode.Userf("the cluster in %s is not running: start it with dbrig server start --dir %s", c.dir, c.dir)
	}
	name, err := change(ctx, note)
	if err != nil {
		return server.Node{}, err
	}
	c.st.Primary = name
	if err := c.writeState(); err != nil {
		return server.Node{}, err
	}
	s, n := c.node(name)
	return c.describeNode(ctx, s, *n), nil
}

// CreateDB creates database name on the primary; the replicas replay it.
func (c *Cluster) CreateDB(ctx context.Context, name string) error {
	c.mu.Lock()
	p := c.primary()
	c.mu.Unlock()
	return p.CreateDB(ctx, name)
}

// DropDB drops database name on the primary.
func (c *Cluster) DropDB(ctx context.Context, name string) error {
	c.mu.Lock()
	p := c.primary()
	c.mu.Unlock()
	return p.DropDB(ctx, name)
}

// URLFor reaches database db on whichever node is primary: every node's
// address, tried in turn until one takes writes.
func (c *Cluster) URLFor(db string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.urlFor(db)
}

func (c *Cluster) urlFor(db string) string {
	hosts := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		hosts[i] = net.JoinHostPort(s.peer.addr(), strconv.Itoa(c.st.Nodes[i].Port))
	}
	q := url.Values{}
	q.Set("sslmode", "disable")
	q.Set("target_session_attrs", "read-write")
	q.Set("passfile", c.passPath())
	u := url.URL{Scheme: "postgres", User: url.User(ServerUser), Host: strings.Join(hosts, ","), Path: "/" + db, RawQuery: q.Encode()}
	return u.String()
}

// passPath is the password file of dbrig's account, which every node's
// URLs name.
func (c *Cluster) passPath() string { return filepath.Join(c.dir, "pgpass") }

// LogPath is the primary's log.
func (c *Cluster) LogPath() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.primary().LogPath()
}

// Version names the version of the nodes' binaries.
func (c *Cluster) Version(ctx context.Context) (string, error) { return c.nodes[0].Version(ctx) }

// DataFormat is the nodes' data format.
func (c *Cluster) DataFormat(ctx context.Context) (string, error) {
	return c.nodes[0].DataFormat(ctx)
}

// CheckSettingNames refuses names the binaries do not know.
func (c *Cluster) CheckSettingNames(ctx context.Context, names []string) error {
	return c.nodes[0].CheckSettingNames(ctx, names)
}

// Preflight checks that every node can take every set of settings.
func (c *Cluster) Preflight(ctx context.Context, points []map[string]string) error {
	return c.nodes[0].Preflight(ctx, points)
}
