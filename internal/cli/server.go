package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbrig/dbrig/internal/dbtarget"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/human"
	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newServer() *cobra.Command {
	c := &cobra.Command{
		Use:   "server",
		Short: "Start, stop and inspect a database server that dbrig manages",
		Long: `dbrig server manages a database server of its own in a directory, of the
kind --kind names at start (postgres by default, or mariadb); stop and status
find the kind in the directory. The data is in DIR/data, the server log in
DIR/server.log (appended to at every start), the unix socket in DIR/sock. The
server listens on that socket and on 127.0.0.1 at a free port, never on other
addresses. As root, it runs as an unprivileged user (postgres or mysql, else
nobody).

postgres: every role needs its password (scram-sha-256); "dbrig" has one
generated for the cluster, in DIR/pgpass (mode 0600), and the URLs printed name
that file (passfile=), so they work for you and nobody else and print no
password. The socket's directory is mode 0700. The binaries are looked for in
--bin, $PG_BIN, pg_config --bindir, PATH, then /usr/lib/postgresql/*/bin (the
newest version).

mariadb: the user "dbrig" with a password generated at creation, kept in
DIR/dbrig-secret (mode 0600); the URLs printed name that file (passfile=), so
they work as printed, for you and nobody else, and hold no password. The
binaries are looked for in --bin, $MARIADB_BIN, then mariadbd on PATH and in
/usr/sbin.

Managed servers need a unix host.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return exitcode.Userf("name a subcommand: dbrig server start|stop|status --dir DIR")
		},
	}
	c.AddCommand(newServerStart(), newServerStop(), newServerStatus(), newServerFailover(), newServerSwitchover())
	return c
}

func newServerStart() *cobra.Command {
	var o serverStart
	c := &cobra.Command{
		Use:   "start --dir DIR",
		Short: "Create the cluster if needed, and start the server",
		Long: `Start creates a cluster in DIR with initdb when there is none, then starts
the server with the given settings, each passed as -c name=value for this
start only. A setting the server rejects stops the start with the server's own
message. With --prewarm DB, every table, index and TOAST relation of database
DB is loaded into shared buffers (pg_prewarm), and the resident fraction is
measured through pg_buffercache and printed.

With --kind mariadb, the server is created with mariadb-install-db and each
setting is passed to mariadbd as --name=value; --prewarm reads every InnoDB
index whole and measures what INNODB_BUFFER_PAGE holds of it.

With --memory and --cpus, the server runs confined, as on a smaller machine:
all its processes live in a cgroup (dbrig/NAME under the cgroup root, v1 or
v2) whose memory limit counts their page cache too, on the CPUs given. This
needs root (or writable cgroups), and the cgroup is removed at stop. A run on
this host then keeps its client off those CPUs where others are left.

With --replicas N (postgres), the server is a cluster: a primary and N
replicas that stream its WAL, each a node with a directory of its own in
DIR (node1, node2, ...), its own port and socket, under the same access rules,
each replica through a replication slot of its own. --sync-replicas K makes
every commit wait for K of them (synchronous_standby_names = ANY K). Start
prints one URL that names every node, with target_session_attrs=read-write,
so that clients reconnect to whichever node is primary. Without --ha dbrig
keeps the cluster itself and changes the primary only when told: dbrig server
failover or switchover, or a run's --failover-at and --switchover-at. With
--ha patroni an etcd and one Patroni per node keep it (Debian: apt-get install
patroni etcd-server), and Patroni promotes a replica once the primary's lease
(--ttl) runs out, as in production. --replica-delay puts each replica in a
network namespace of its own, joined to the host by a veth pair whose packets
are held that long, as in another zone (needs root).

With --nodes N (mariadb), the server is a Galera cluster of N nodes that all
take writes (galera-4's provider, rsync and ss are needed: Debian's galera-4,
rsync and iproute2), each a node in DIR (node1, node2, ...) with its own data,
socket, client port and group, IST and SST ports on 127.0.0.1, one password for
all in DIR/dbrig-secret. The first start founds the cluster from node1 and the
others join it one after another, each taking node1's data by rsync; a start
after a stop founds it from the node that stopped last. Start prints one URL
that names every node, and each node's own URL. A --set of wsrep_provider_options
(gcs.fc_limit=...) is added to dbrig's own; the wsrep settings dbrig sets
itself cannot be changed. A run's --kill-node-at loses one node.`,
		Example: `  dbrig server start --dir /srv/dbrig-pg
  dbrig server start --dir /srv/dbrig-pg --set shared_buffers=2GB --set max_connections=200
  dbrig server start --dir /srv/dbrig-pg --bin /usr/lib/postgresql/18/bin --set io_method=io_uring
  dbrig server start --dir /srv/dbrig-pg --set shared_buffers=4GB --prewarm bench
  dbrig server start --dir /srv/dbrig-pg --memory 2GB --cpus 1
  dbrig server start --kind mariadb --dir /srv/dbrig-maria --set innodb_buffer_pool_size=2G
  dbrig server start --dir /srv/dbrig-ha --replicas 2 --sync-replicas 1 --ha patroni
  dbrig server start --dir /srv/dbrig-far --replicas 1 --sync-replicas 1 --replica-delay 5ms
  dbrig server start --kind mariadb --nodes 3 --dir /srv/dbrig-galera --set wsrep_provider_options=gcs.fc_limit=64`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return o.run(c) },
	}
	c.Flags().StringVar(&o.dir, "dir", "", "directory of the server (cluster, log, socket); required")
	c.Flags().StringArrayVar(&o.sets, "set", nil, "server setting `name=value` for this start (repeatable)")
	c.Flags().StringVar(&o.kind, "kind", server.Default(), "kind of server to create and start: "+strings.Join(server.Kinds(), ", "))
	c.Flags().StringVar(&o.bin, "bin", "", "directory holding the server's binaries (postgres: postgres, initdb, pg_ctl; mariadb: mariadbd)")
	c.Flags().StringVar(&o.bin, "pg-bin", "", "the same as --bin, as it was named when PostgreSQL was the only kind")
	c.Flags().MarkHidden("pg-bin")
	c.Flags().StringVar(&o.prewarm, "prewarm", "", "after start, load database `DB` into shared buffers and print the resident fraction")
	c.Flags().StringVar(&o.memory, "memory", "", "confine the server's memory, page cache included, to `SIZE` (512MB, 2GB)")
	c.Flags().StringVar(&o.cpus, "cpus", "", "confine the server to `CPUS`, a list such as 0, 0-1 or 0,2")
	addTopologyFlags(c.Flags(), &o.topo)
	return c
}

// addTopologyFlags adds the flags that make a server a cluster.
func addTopologyFlags(fs *pflag.FlagSet, t *server.Topology) {
	fs.IntVar(&t.Replicas, "replicas", 0, "make a cluster: a primary and `N` replicas streaming from it (postgres)")
	fs.IntVar(&t.Nodes, "nodes", 0, "make a cluster of `N` nodes that all take writes (mariadb: Galera)")
	fs.IntVar(&t.SyncReplicas, "sync-replicas", 0, "with --replicas, how many replicas each commit waits for (0: asynchronous)")
	fs.StringVar(&t.HA, "ha", "", "with --replicas, the HA manager that keeps the cluster and promotes a replica when the primary is lost: patroni")
	fs.DurationVar(&t.ReplicaDelay, "replica-delay", 0, "with --replicas, put each replica in a network namespace of its own, this far away (2ms): every packet it sends waits that long")
	fs.DurationVar(&t.TTL, "ttl", 0, "with --ha, how long the primary's lease lasts unrenewed before a replica may take its place (Patroni's ttl; default 30s)")
	fs.DurationVar(&t.LoopWait, "loop-wait", 0, "with --ha, how often each node's HA manager looks (Patroni's loop_wait; default 10s)")
}

// serverStart is what dbrig server start was given.
type serverStart struct {
	kind, dir, bin, prewarm, memory, cpus string
	sets                                  []string
	topo                                  server.Topology
	// say tells what a start does, as it does it.
	say func(string)
}

func (o *serverStart) run(c *cobra.Command) error {
	if err := needDir(o.dir); err != nil {
		return err
	}
	// --nodes 0 reads as no flag at all, which would start one server.
	if c.Flags().Changed("nodes") && o.topo.Nodes == 0 {
		return exitcode.Userf("--nodes 0: want 1 or more")
	}
	settings, err := parseSettings(o.sets)
	if err != nil {
		return err
	}
	confined, err := server.ParseConfinement(o.memory, o.cpus)
	if err != nil {
		return exitcode.Userf("--%v", err)
	}
	ctx, stop := signalContext(c.ErrOrStderr())
	defer stop()
	s, err := o.server()
	if err != nil {
		return err
	}
	o.say = func(what string) { fmt.Fprintln(c.ErrOrStderr(), what) }
	if p, ok := s.(server.Progresser); ok {
		p.SetProgress(o.say)
	}
	if err := s.Confine(confined); err != nil {
		return err
	}
	// Nothing is printed until the server is up, so that a failure is the
	// one line on stderr that says why.
	cluster, err := o.start(ctx, s, settings)
	if err != nil {
		return err
	}
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	fmt.Fprintf(out, "%s from %s\n", st.Version, st.BinDir)
	fmt.Fprintf(out, "Cluster: %s (%s)\n", o.dir, cluster)
	fmt.Fprintf(out, "URL:     %s\n", dbtarget.Redact(st.URL))
	fmt.Fprintf(out, "Socket:  %s\n", dbtarget.Redact(st.Socket))
	fmt.Fprintf(out, "Log:     %s\n", st.LogPath)
	if len(settings) > 0 {
		fmt.Fprintf(out, "Settings: %s\n", result.Settings(settings))
	}
	if !confined.IsZero() {
		fmt.Fprintf(out, "Confined: %s\n", confinedLine(st))
	}
	if cl, ok := s.(server.Cluster); ok {
		fmt.Fprintf(out, "Topology: %s\n", cl.Topology())
		if err := printNodes(ctx, out, cl); err != nil {
			return err
		}
	}
	if o.prewarm == "" {
		return nil
	}
	r, err := prewarmDB(ctx, s.URLFor(o.prewarm))
	if err != nil {
		// The server is up and stays up: the user can fix the database
		// and prewarm again with a restart.
		return fmt.Errorf("the server is running, but prewarming %s failed: %w", o.prewarm, err)
	}
	fmt.Fprintf(out, "Prewarmed %s: %s\n", o.prewarm, r)
	return nil
}

// server is the server to start: a cluster, with cluster flags.
// A directory that holds a cluster starts it again as it was made, and
// one that holds a server of its own never becomes a cluster.
func (o *serverStart) server() (server.Server, error) {
	rec, err := server.ReadState(o.dir)
	switch {
	case err == nil && rec.Topology != nil:
		if !o.topo.IsZero() && o.topo != *rec.Topology {
			return nil, exitcode.Userf("%s holds a cluster of %s: start it as it is (no cluster flags), or give another directory for another", o.dir, rec.Topology)
		}
		return server.NewCluster(rec.Kind, o.dir, o.bin, *rec.Topology)
	case err == nil && !o.topo.IsZero():
		return nil, exitcode.Userf("%s holds a %s server of its own, not a cluster: give another directory for one", o.dir, rec.Kind)
	case o.topo.IsZero():
		return server.New(o.kind, o.dir, o.bin)
	case o.topo.Replicas == 0 && o.topo.Nodes == 0:
		return nil, o.topo.Check()
	}
	return server.NewCluster(o.kind, o.dir, o.bin, o.topo)
}

// start creates the cluster when there is none, and starts the server; it
// says which cluster it started: "new cluster" or "existing cluster".
func (o *serverStart) start(ctx context.Context, s server.Server, settings map[string]string) (string, error) {
	// The binaries are found (or not) before anything is touched.
	if _, err := s.Version(ctx); err != nil {
		return "", err
	}
	if running, err := server.AttachDir(o.dir); err == nil && running.Running() {
		// A cluster that lost nodes gets them back, and carries on.
		if r, ok := running.(server.Rejoiner); ok && len(settings) == 0 {
			if p, ok := running.(server.Progresser); ok {
				p.SetProgress(o.say)
			}
			back, err := r.Rejoin(ctx)
			if err != nil || len(back) > 0 {
				return "running cluster, " + strings.Join(back, ", ") + " back", err
			}
		}
		return "", exitcode.Userf("a server is already running in %s: stop it first with dbrig server stop --dir %s", o.dir, o.dir)
	}
	cluster := "existing cluster"
	if !s.Exists() {
		if err := s.Init(ctx); err != nil {
			return "", err
		}
		cluster = "new cluster"
	}
	return cluster, s.Start(ctx, settings)
}

func newServerStop() *cobra.Command {
	var dir string
	var timeout time.Duration
	c := &cobra.Command{
		Use:     "stop --dir DIR",
		Short:   "Stop the server (fast shutdown)",
		Example: `  dbrig server stop --dir /srv/dbrig-pg`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := attach(dir)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			out := c.OutOrStdout()
			if !s.Running() {
				st, err := s.Status(ctx)
				if err != nil {
					return err
				}
				if st.State == server.Crashed {
					fmt.Fprintf(out, "The server in %s had crashed: %s\n", dir, st.Reason)
				} else {
					fmt.Fprintf(out, "No server running in %s\n", dir)
				}
				// Acknowledges a crash, so status stops reporting it.
				return s.Stop(ctx)
			}
			if err := s.Stop(ctx); err != nil {
				if errors.Is(err, server.ErrCrashed) {
					// Found dead while stopping: report it as crashed, as
					// when it was found dead before, and acknowledge it.
					st, serr := s.Status(ctx)
					if serr != nil || st.State != server.Crashed {
						return err
					}
					fmt.Fprintf(out, "The server in %s had crashed: %s\n", dir, st.Reason)
					return s.Stop(ctx)
				}
				if ctx.Err() != nil {
					return fmt.Errorf("the server in %s did not stop within %v: %w", dir, timeout, err)
				}
				return err
			}
			fmt.Fprintf(out, "Stopped the server in %s\n", dir)
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "directory of the server; required")
	c.Flags().DurationVar(&timeout, "timeout", 90*time.Second, "how long to wait for the shutdown")
	return c
}

func newServerStatus() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "status --dir DIR",
		Short: "Say whether the server runs; exit 0 if it does, 1 if stopped or crashed",
		Long: `Status prints the server's state (running, stopped or crashed), its version,
URL, log and the settings dbrig started it with. A server that dbrig started
and that is gone without a stop has crashed: status says so, with the last
words of its log. The exit code is 0 when the server runs, 1 otherwise.`,
		Example: `  dbrig server status --dir /srv/dbrig-pg && echo up`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := attach(dir)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			st, err := s.Status(ctx)
			if err != nil {
				return err
			}
			printStatus(c.OutOrStdout(), dir, st)
			if cl, ok := s.(server.Cluster); ok {
				fmt.Fprintf(c.OutOrStdout(), "  topology: %s\n", cl.Topology())
				if err := printNodes(ctx, c.OutOrStdout(), cl); err != nil {
					return err
				}
			}
			if st.State != server.Running {
				return &failure{}
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "directory of the server; required")
	return c
}

func newServerFailover() *cobra.Command {
	return handOverCommand("failover", "Lose the cluster's primary and make another node primary",
		`Failover ends the cluster's primary as the loss of its machine would: its
postmaster (and, with --ha patroni, its Patroni) killed with SIGKILL. Without
an HA manager dbrig then promotes the replica that received the most of the
primary's WAL and points the others at it; with Patroni, Patroni promotes one
once the primary's lease (--ttl) runs out. The old primary stays down, and the
next start makes it again from the new primary, as a replica. What the old
primary acknowledged and no replica had received is lost with asynchronous
replication: a run's --audit-durability counts it.`,
		func(ctx context.Context, c server.Cluster, note func(string)) (server.Node, error) {
			return c.Failover(ctx, note)
		})
}

func newServerSwitchover() *cobra.Command {
	return handOverCommand("switchover", "Hand the cluster's primary role to another node, planned",
		`Switchover hands the primary's role to a replica, planned: without an HA
manager dbrig stops the primary cleanly, waits until the replica that received
the most of its WAL has its shutdown checkpoint, promotes it, and makes the old
primary a replica of it; with --ha patroni, Patroni does it (its REST API's
switchover). Nothing acknowledged is lost.`,
		func(ctx context.Context, c server.Cluster, note func(string)) (server.Node, error) {
			return c.Switchover(ctx, note)
		})
}

// handOverCommand is failover's and switchover's command: change the
// cluster's primary with change, saying what happens, and name the new one.
func handOverCommand(name, short, long string, change func(context.Context, server.Cluster, func(string)) (server.Node, error)) *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:     name + " --dir DIR",
		Short:   short,
		Long:    long,
		Example: "  dbrig server " + name + " --dir /srv/dbrig-ha",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := attach(dir)
			if err != nil {
				return err
			}
			cl, ok := s.(server.Cluster)
			if !ok {
				return exitcode.Userf("%s is a server of its own, not a cluster: %s is for one made with dbrig server start --replicas N", dir, name)
			}
			ctx, stop := signalContext(c.ErrOrStderr())
			defer stop()
			out := c.OutOrStdout()
			started := time.Now()
			n, err := change(ctx, cl, func(what string) {
				fmt.Fprintf(out, "%5.1f s  %s\n", time.Since(started).Seconds(), what)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Primary: %s at %s (timeline %d), %.1f s after the %s began\n", n.Name, n.Addr, n.Timeline, time.Since(started).Seconds(), name)
			return printNodes(ctx, out, cl)
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "directory of the cluster; required")
	return c
}

// printNodes prints each node of cluster c: its role, where it listens,
// and how far behind a replica is, or, in a cluster whose nodes all take
// writes, what each one sees of the cluster.
func printNodes(ctx context.Context, w io.Writer, c server.Cluster) error {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	multiMaster := c.Topology().Nodes > 0
	if multiMaster {
		memberRows(tw, nodes)
	} else {
		replicaRows(tw, nodes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Any node of a multi-master cluster takes a run of its own.
	if multiMaster {
		for _, n := range nodes {
			fmt.Fprintf(w, "  %s url: %s\n", n.Name, dbtarget.Redact(n.URL))
		}
	}
	for _, n := range nodes {
		if n.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", n.Name, n.Note)
		}
	}
	return nil
}

// memberRows are the nodes of a multi-master cluster: each one's view of
// the cluster (its primary component or not, how many nodes, whether it
// takes queries) and what it does.
func memberRows(tw io.Writer, nodes []server.Node) {
	fmt.Fprintln(tw, "  node\trole\tcluster\tsize\tready\tstate\taddress")
	for _, n := range nodes {
		size, ready := "", ""
		if n.Role == server.RoleMember {
			size, ready = fmt.Sprint(n.ClusterSize), "no"
			if n.Ready {
				ready = "yes"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.ClusterStatus, size, ready, n.State, n.Addr)
	}
}

// replicaRows are the nodes of a primary and its replicas.
func replicaRows(tw io.Writer, nodes []server.Node) {
	fmt.Fprintln(tw, "  node\trole\tsync\tstate\taddress\tdelay\ttimeline\tlsn\tlag")
	for _, n := range nodes {
		lag, delay, tl := "", "", ""
		if n.Role == server.RoleReplica && n.LagBytes >= 0 {
			lag = fmt.Sprintf("%s, %s", human.Bytes(float64(n.LagBytes)), n.Lag.Round(time.Millisecond))
		}
		if n.Delay > 0 {
			delay = n.Delay.String()
		}
		if n.Timeline > 0 {
			tl = fmt.Sprint(n.Timeline)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Role, n.Sync, n.State, n.Addr, delay, tl, n.LSN, lag)
	}
}

func printStatus(w io.Writer, dir string, st server.Status) {
	fmt.Fprintf(w, "%s: %s\n", st.State, dir)
	ver := st.Version
	if ver == "" {
		ver = "unknown version"
	}
	fmt.Fprintf(w, "  binaries: %s (%s)\n", st.BinDir, ver)
	switch st.State {
	case server.Running:
		fmt.Fprintf(w, "  pid:      %d\n", st.PID)
		fmt.Fprintf(w, "  url:      %s\n", dbtarget.Redact(st.URL))
		fmt.Fprintf(w, "  socket:   %s\n", dbtarget.Redact(st.Socket))
	case server.Crashed:
		fmt.Fprintf(w, "  reason:   %s\n", st.Reason)
	}
	if !st.Started.IsZero() {
		fmt.Fprintf(w, "  started:  %s\n", st.Started.Local().Format(time.RFC3339))
	}
	if len(st.Settings) > 0 {
		fmt.Fprintf(w, "  settings: %s\n", result.Settings(st.Settings))
	}
	if !st.Confinement.IsZero() {
		fmt.Fprintf(w, "  confined: %s\n", confinedLine(st))
	}
	fmt.Fprintf(w, "  log:      %s\n", st.LogPath)
}

// confinedLine is "memory 2GB, cpus 1 (cgroup /sys/fs/cgroup/memory/dbrig/x)".
func confinedLine(st server.Status) string {
	if st.MemoryCgroup == "" {
		return st.Confinement.String()
	}
	return st.Confinement.String() + " (cgroup " + st.MemoryCgroup + ")"
}

// attach reaches the server dbrig started in dir, from any process.
func attach(dir string) (server.Server, error) {
	if err := needDir(dir); err != nil {
		return nil, err
	}
	return server.AttachDir(dir)
}

// prewarmDB loads the database at url into the server's cache, when its
// kind of target can.
func prewarmDB(ctx context.Context, url string) (dbtarget.Residency, error) {
	t, err := dbtarget.OpenExisting(ctx, url)
	if err != nil {
		return dbtarget.Residency{}, err
	}
	defer t.Close()
	pw, ok := t.(dbtarget.Prewarmer)
	if !ok {
		return dbtarget.Residency{}, exitcode.Userf("a %s target cannot warm its cache", t.Kind())
	}
	return pw.Prewarm(ctx)
}

func needDir(dir string) error {
	if dir == "" {
		return exitcode.Userf("--dir is required: the directory that holds the server's cluster, log and socket")
	}
	return nil
}

// settingNameRE is what a PostgreSQL parameter name can be, including the
// dotted custom ones (auto_explain.log_min_duration).
var settingNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// parseSettings reads repeated --set name=value flags. Names are matched
// case-insensitively by the server, so a repeat in another case is still a
// repeat.
func parseSettings(sets []string) (map[string]string, error) {
	settings := make(map[string]string, len(sets))
	seen := make(map[string]string)
	for _, kv := range sets {
		name, value, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		if !ok || !settingNameRE.MatchString(name) {
			return nil, exitcode.Userf("--set %q: want name=value, e.g. --set shared_buffers=1GB", kv)
		}
		if prev, dup := seen[strings.ToLower(name)]; dup {
			return nil, exitcode.Userf("--set %s given twice (also as %s): give each setting once", name, prev)
		}
		seen[strings.ToLower(name)] = name
		settings[name] = value
	}
	return settings, nil
}
