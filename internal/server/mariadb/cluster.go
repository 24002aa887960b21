//go:build unix

package mariadb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dbrig/dbrig/internal/atomicfile"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
)

var (
	_ server.Cluster    = (*Cluster)(nil)
	_ server.Progresser = (*Cluster)(nil)
	_ server.NodeKiller = (*Cluster)(nil)
)

// Cluster is a MariaDB Galera cluster that dbrig manages in one
// directory: nodes that all take writes, each certifying its
// transactions against the others' at commit. Each node is a server of
// its own in Dir/nodeN (its data, log, socket, temporary files and
// state, as a Server keeps them), with its own client, group, IST and SST
// ports on loopback, chosen at Init; the cluster's state is in
// Dir/cluster.json and Dir/dbrig-server.json, and the dbrig account's
// password, the same on every node, in Dir/dbrig-secret, which every
// URL names. Every node keeps a server's access rules: dbrig's account
// from 127.0.0.1 and the socket only, root through the socket as the
// OS's root, loopback alone.
//
// The first start founds the cluster from node1, whose data Init makes;
// each other node then joins, one after another, taking all its data
// from a running node (a state transfer by rsync). A start after a stop
// founds it from the node that stopped last, which holds everything.
type Cluster struct {
	dir, bin string
	topo     server.Topology

	mu    sync.Mutex
	st    clusterState
	nodes []*Server
	// running says this process started the cluster, or found a node
	// of it running.
	running bool
	// say tells what a start does, as it does it.
	say server.Say
}

// clusterState is Dir/cluster.json: the nodes and their ports, for
// another process to find them.
type clusterState struct {
	// Name is the cluster's wsrep_cluster_name, made at Init.
	Name  string      `json:"name"`
	Nodes []nodeState `json:"nodes"`
	// Bootstrap names the node the last stop stopped last, which the
	// next start founds the cluster from.
	Bootstrap string `json:"bootstrap,omitempty"`
	// Settings are those of the last start, for every node.
	Settings map[string]string `json:"settings,omitempty"`
}

// nodeState is one node as the cluster records it.
type nodeState struct {
	Name string `json:"name"`
	// Port is the clients'; Group, IST and SST are the other nodes'.
	Port  int `json:"port"`
	Group int `json:"group_port"`
	IST   int `json:"ist_port"`
	SST   int `json:"sst_port"`
	// Lost marks a node KillNode ended, which the next start brings back.
	Lost bool `json:"lost,omitempty"`
}

// NewCluster is the cluster in dir of topology t (t.Nodes nodes), run
// from the binaries in binDir ("": see FindBinDir); nothing is touched
// yet.
func NewCluster(dir, binDir string, t server.Topology) *Cluster {
	c := &Cluster{dir: dir, bin: binDir, topo: t}
	for i := range t.Nodes {
		c.st.Nodes = append(c.st.Nodes, nodeState{Name: "node" + strconv.Itoa(i+1)})
	}
	c.bindNodes()
	return c
}

// SetProgress has the cluster tell say what a start does.
func (c *Cluster) SetProgress(say func(string)) { c.say = say }

// bindNodes makes the nodes' servers for the state's nodes.
func (c *Cluster) bindNodes() {
	peers := make([]int, len(c.st.Nodes))
	for i, n := range c.st.Nodes {
		peers[i] = n.Group
	}
	c.nodes = make([]*Server, len(c.st.Nodes))
	for i, n := range c.st.Nodes {
		s := New(filepath.Join(c.dir, n.Name), c.bin)
		s.member = &member{name: n.Name, cluster: c.st.Name, group: n.Group, ist: n.IST, sst: n.SST,
			peers: peers, secret: c.secretPath(), join: i > 0}
		if n.Port != 0 {
			s.Live.Fix(n.Port)
		}
		c.nodes[i] = s
	}
}

func (c *Cluster) statePath() string  { return filepath.Join(c.dir, "cluster.json") }
func (c *Cluster) secretPath() string { return filepath.Join(c.dir, "dbrig-secret") }

func (c *Cluster) writeState() error { return server.WriteJSON(c.statePath(), c.st) }

func (c *Cluster) readState() error {
	var st clusterState
	if err := server.ReadJSON(c.statePath(), &st); err != nil {
		return err
	}
	if len(st.Nodes) != c.topo.Nodes {
		return fmt.Errorf("%s: %d nodes, and the topology says %d", c.statePath(), len(st.Nodes), c.topo.Nodes)
	}
	c.st = st
	c.bindNodes()
	return nil
}

// resolve makes Dir absolute and finds the binaries, once.
func (c *Cluster) resolve() error {
	abs, err := filepath.Abs(c.dir)
	if err != nil {
		return err
	}
	bin, err := FindBinDir(c.bin)
	if err != nil {
		return err
	}
	if abs != c.dir || bin != c.bin {
		c.dir, c.bin = abs, bin
		c.bindNodes()
	}
	return nil
}

// index is the position of the node named name, -1 for none.
func (c *Cluster) index(name string) int {
	return slices.IndexFunc(c.st.Nodes, func(n nodeState) bool { return n.Name == name })
}

// Dir is where the cluster lives.
func (c *Cluster) Dir() string { return c.dir }

// Topology is the shape the cluster was made with.
func (c *Cluster) Topology() server.Topology { return c.topo }

// Exists reports whether Init made the cluster: its state, and every
// node's data (a joining node's, its empty directory).
func (c *Cluster) Exists() bool {
	if _, err := os.Stat(c.statePath()); err != nil {
		return false
	}
	for _, s := range c.nodes {
		if !s.Exists() {
			return false
		}
	}
	return true
}

// Init gives each node its ports and the cluster its name and password,
// records them, and makes node1's data (mariadb-install-db, with the
// dbrig account); the other nodes' data directories stay empty until
// they join. An Init that failed half-way is finished by the next.
func (c *Cluster) Init(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.resolve(); err != nil {
		return err
	}
	if _, err := os.Stat(c.statePath()); err == nil {
		if err := c.readState(); err != nil {
			return err
		}
	} else if err := c.create(); err != nil {
		return err
	}
	if !c.nodes[0].Exists() {
		c.say.Tell("making %s's data (mariadb-install-db)", c.st.Nodes[0].Name)
	}
	for i, s := range c.nodes {
		if err := s.Init(ctx); err != nil {
			return fmt.Errorf("%s: %w", c.st.Nodes[i].Name, err)
		}
	}
	return nil
}

// create records a new cluster in the empty or new Dir: its name, its
// ports and its password.
func (c *Cluster) create() error {
	if entries, err := os.ReadDir(c.dir); err == nil && len(entries) > 0 {
		return exitcode.Userf("%s holds something else than a dbrig cluster: give an empty or new directory for one", c.dir)
	}
	if err := ClusterTools(); err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	id := make([]byte, 4)
	if _, err := rand.Read(id); err != nil {
		return err
	}
	c.st.Name = "dbrig-" + hex.EncodeToString(id)
	ports, err := freePorts(4 * len(c.st.Nodes))
	if err != nil {
		return err
	}
	for i := range c.st.Nodes {
		n := &c.st.Nodes[i]
		n.Port, n.Group, n.IST, n.SST = ports[4*i], ports[4*i+1], ports[4*i+2], ports[4*i+3]
	}
	pw, err := server.NewPassword()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(c.secretPath(), []byte(pw+"\n"), 0o600); err != nil {
		return err
	}
	c.bindNodes()
	return c.writeState()
}

// freePorts are n distinct loopback ports that nothing listens on now.
func freePorts(n int) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for len(out) < n {
		p, err := server.FreeLoopbackPort()
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
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
// another process (a run that killed a node) may have changed them since
// this one last looked.
func (c *Cluster) attach() error {
	if rec, err := server.ReadState(c.dir); err == nil && rec.BinDir != "" {
		c.bin = rec.BinDir
	}
	if err := c.resolve(); err != nil {
		return err
	}
	if err := c.readState(); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return exitcode.Userf("no dbrig cluster in %s: start one with dbrig server start --kind mariadb --nodes N --dir %s", c.dir, c.dir)
		}
		return err
	}
	c.running = false
	for _, s := range c.nodes {
		if s.Exists() {
			if err := s.Attach(); err != nil {
				return err
			}
			c.running = c.running || s.Running()
		}
	}
	return nil
}

// Start starts every node with settings: the cluster founded from one
// node, then each other joining it, one after another, each once the one
// before is synced. It returns once every node is synced with the others.
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
	provider, err := findProvider()
	if err != nil {
		return err
	}
	// Refused before any node starts: each node would refuse them, but
	// only once the nodes before it run.
	if err := c.nodes[0].member.check(settings); err != nil {
		return err
	}
	names, err := server.SettingOrder(settings, own{c.nodes[0]}.Owned)
	if err != nil {
		return err
	}
	if err := c.nodes[0].CheckSettingNames(ctx, names); err != nil {
		return err
	}
	if err := c.start(ctx, provider, settings); err != nil {
		// What started is stopped: a half-started cluster would hold its
		// ports and its data for no one.
		_ = c.stop(context.WithoutCancel(ctx))
		return errors.Join(err, c.writeState())
	}
	c.st.Settings = settings
	c.running = true
	if err := c.writeState(); err != nil {
		return err
	}
	return c.writeRecord(ctx, true)
}

func (c *Cluster) start(ctx context.Context, provider string, settings map[string]string) error {
	first, err := c.bootstrapNode(ctx)
	if err != nil {
		return err
	}
	order := []int{first}
	for i := range c.nodes {
		if i != first {
			order = append(order, i)
		}
	}
	for _, i := range order {
		s, n := c.nodes[i], &c.st.Nodes[i]
		s.member.provider, s.member.bootstrap = provider, i == first
		switch {
		case i == first:
			c.say.Tell("%s: founding the cluster", n.Name)
		case !s.hasData():
			c.say.Tell("%s: joining, all its data by state transfer (rsync) from a running node", n.Name)
		default:
			c.say.Tell("%s: rejoining, taking what it missed from a running node", n.Name)
		}
		err := s.Start(ctx, settings)
		s.member.bootstrap = false
		if err == nil {
			err = c.awaitSynced(ctx, s)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		n.Lost = false
	}
	return nil
}

// bootstrapNode is the index of the node the start founds the cluster
// from (see pickBootstrap), made safe to found it from where Galera
// would refuse.
func (c *Cluster) bootstrapNode(ctx context.Context) (int, error) {
	states := make([]grastate, len(c.nodes))
	for i, s := range c.nodes {
		g, err := s.readGrastate()
		if err != nil {
			return 0, err
		}
		states[i] = g
	}
	i, mark, err := pickBootstrap(states, c.index(c.st.Bootstrap), func(i int) (int64, error) {
		c.say.Tell("%s: did not stop cleanly; reading its last transaction (mariadbd --wsrep-recover)", c.st.Nodes[i].Name)
		return c.nodes[i].recoverPosition(ctx, c.st.Settings)
	})
	if err != nil || !mark {
		return i, err
	}
	c.say.Tell("%s: holds the most of the cluster's data; marking it safe to found the cluster from", c.st.Nodes[i].Name)
	return i, c.nodes[i].markSafe()
}

// hasData says the node's data directory holds data: it has run, or
// Init made it.
func (s *Server) hasData() bool {
	_, err := os.Stat(filepath.Join(s.DataDir(), "mysql"))
	return err == nil
}

// Stop stops every node cleanly (SIGTERM), the last one first, so that
// node1 (or the first left running) stops last, holding everything, and
// founds the cluster at the next start.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return err
	}
	err := c.stop(ctx)
	c.running = false
	return errors.Join(err, c.writeState(), c.writeRecord(ctx, false))
}

func (c *Cluster) stop(ctx context.Context) error {
	var errs []error
	for i := len(c.nodes) - 1; i >= 0; i-- {
		s := c.nodes[i]
		if s.Running() {
			c.st.Bootstrap = c.st.Nodes[i].Name
		}
		// A node found dead was lost by design, or its crash is told by
		// the cluster's Status until this stop; either way it is down.
		if err := s.Stop(ctx); err != nil && !errors.Is(err, server.ErrCrashed) {
			errs = append(errs, fmt.Errorf("%s: %w", c.st.Nodes[i].Name, err))
		}
	}
	return errors.Join(errs...)
}

// writeRecord keeps the cluster's record in Dir, for server.AttachDir.
func (c *Cluster) writeRecord(ctx context.Context, running bool) error {
	t, n := c.topo, c.nodes[0]
	rec := &server.Record{Kind: Kind, BinDir: c.bin, RunAs: n.Host.User, Settings: c.st.Settings, Topology: &t}
	return server.WriteClusterRecord(ctx, c.dir, rec, running, n.Version)
}

// Running reports whether the cluster was started or found running.
func (c *Cluster) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// Status is a running node's, with the URL that names every node;
// stopped, the first node's.
func (c *Cluster) Status(ctx context.Context) (server.Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return server.Status{}, err
	}
	s := c.nodes[0]
	if r := c.anyRunning(); r != nil {
		s = r
	}
	st, err := s.Status(ctx)
	if err != nil {
		return st, err
	}
	st.Settings = c.st.Settings
	if st.State == server.Running {
		st.URL = c.urlFor("mysql")
		for i, n := range c.nodes {
			st.Nodes = append(st.Nodes, n.urlAt("mysql", c.st.Nodes[i].Port))
		}
	}
	return st, nil
}

// anyRunning is the first node that runs, nil for none.
func (c *Cluster) anyRunning() *Server {
	for _, s := range c.nodes {
		if s.Running() {
			return s
		}
	}
	return nil
}

// URLFor reaches database db on the cluster: one URL that names every
// node, any of which takes writes.
func (c *Cluster) URLFor(db string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.urlFor(db)
}

func (c *Cluster) urlFor(db string) string {
	hosts := make([]string, len(c.st.Nodes))
	for i, n := range c.st.Nodes {
		hosts[i] = loopback(n.Port)
	}
	return (&url.URL{Scheme: "mariadb", User: url.User(ServerUser), Host: strings.Join(hosts, ","), Path: "/" + db,
		RawQuery: url.Values{"passfile": {c.secretPath()}}.Encode()}).String()
}

// CreateDB creates database name through a running node; Galera makes
// it on every node.
func (c *Cluster) CreateDB(ctx context.Context, name string) error {
	s, err := c.through()
	if err != nil {
		return err
	}
	return s.CreateDB(ctx, name)
}

// DropDB drops database name through a running node, on every node.
func (c *Cluster) DropDB(ctx context.Context, name string) error {
	s, err := c.through()
	if err != nil {
		return err
	}
	return s.DropDB(ctx, name)
}

// through is a running node, for what any node does for all.
func (c *Cluster) through() (*Server, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.anyRunning(); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("no node of the cluster in %s is running", c.dir)
}

// Failover refuses: every node of a Galera cluster takes writes, so
// there is no primary to lose.
func (c *Cluster) Failover(context.Context, func(string)) (server.Node, error) {
	return server.Node{}, noPrimary("fail over")
}

// Switchover refuses, as Failover does.
func (c *Cluster) Switchover(context.Context, func(string)) (server.Node, error) {
	return server.Node{}, noPrimary("switch over")
}

func noPrimary(what string) error {
	return exitcode.Userf("a Galera cluster has no primary to %s: every node takes writes; lose one with a run's --kill-node-at T NODE", what)
}

// LogPath is the first node's log.
func (c *Cluster) LogPath() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[0].LogPath()
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
