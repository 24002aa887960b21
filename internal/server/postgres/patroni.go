//go:build unix

package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/atomicfile"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/jackc/pgx/v5"
	"go.yaml.in/yaml/v3"
)

// HAPatroni is Patroni, the HA manager of Topology.HA: one Patroni per
// node, which runs the node's postmaster, and an etcd they keep the
// cluster's leader lease in.
const HAPatroni = "patroni"

// Patroni's timing where the topology leaves it: its own defaults.
const (
	defaultTTL      = 30 * time.Second
	defaultLoopWait = 10 * time.Second
)

// patroni keeps the cluster as Patroni does in production: it makes the
// first node's data (initdb) and every replica's (pg_basebackup), holds
// the leader's lease in etcd, and promotes a replica once the leader's
// lease runs out. dbrig only starts and stops the processes, reads
// Patroni's REST API, and, for a failover, ends a leader's Patroni and
// postmaster as the loss of its machine would.
type patroni struct {
	c *Cluster
	// started names the nodes whose Patroni this process started, which
	// a wait for a leader watches, until it stops them or makes the node
	// anew: a sweep starts a cluster again in the same process.
	started map[string]bool
}

// etcdState is the store's process and ports.
type etcdState struct {
	Daemon     server.Daemon `json:"daemon"`
	ClientPort int           `json:"client_port"`
	PeerPort   int           `json:"peer_port"`
}

// HABinaries says in one line what is missing of Patroni and etcd, and
// how to get it; nil where both are installed.
func HABinaries() error {
	_, _, err := haBinaries()
	return err
}

// haBinaries finds patroni and etcd, or says in one line how to get them.
func haBinaries() (patroniBin, etcdBin string, err error) {
	p, perr := exec.LookPath("patroni")
	e, eerr := exec.LookPath("etcd")
	if perr != nil || eerr != nil {
		var missing []string
		if perr != nil {
			missing = append(missing, "patroni")
		}
		if eerr != nil {
			missing = append(missing, "etcd")
		}
		return "", "", exitcode.Userf("--ha patroni needs Patroni and etcd, and %s is not installed here (Debian: apt-get install patroni etcd-server)", joinAnd(missing))
	}
	return p, e, nil
}

func joinAnd(names []string) string {
	if len(names) == 2 {
		return names[0] + " and " + names[1]
	}
	return names[0]
}

func (h *patroni) start(ctx context.Context, settings map[string]string) error {
	c := h.c
	patroniBin, etcdBin, err := haBinaries()
	if err != nil {
		return err
	}
	c.tell("starting etcd")
	if err := h.startEtcd(ctx, etcdBin); err != nil {
		return err
	}
	if err := c.superPassword(); err != nil {
		return err
	}
	first := c.st.Primary
	fresh := !c.primary().Exists()
	for i, s := range c.nodes {
		n := &c.st.Nodes[i]
		if n.Lost {
			// Patroni makes it again from the leader, as a replica.
			if err := s.unmake(); err != nil {
				return err
			}
			n.Lost = false
			h.forget(n)
		}
		// Patroni sets synchronous_standby_names itself, from the topology's
		// synchronous_node_count.
		if err := h.writeConfig(s, *n, settings); err != nil {
			return err
		}
	}
	// The first node alone bootstraps a new cluster, so that it is the
	// primary, as the cluster's state says; the others join it.
	order := []string{first}
	for _, n := range c.st.Nodes {
		if n.Name != first {
			order = append(order, n.Name)
		}
	}
	for k, name := range order {
		c.tell("starting %s's Patroni", name)
		if err := h.startNode(ctx, patroniBin, name); err != nil {
			return err
		}
		if k == 0 {
			c.tell("waiting for Patroni to make %s the leader", name)
			leader, err := h.awaitLeader(ctx, "", h.bootLimit(fresh))
			if err != nil {
				return err
			}
			c.st.Primary = leader
		}
	}
	if err := c.writeState(); err != nil {
		return err
	}
	if err := h.attachNodes(); err != nil {
		return err
	}
	c.tell("waiting for Patroni's replicas to stream")
	if err := c.awaitStreaming(ctx, c.primary(), c.liveReplicas()); err != nil {
		return err
	}
	return h.awaitSyncStandbys(ctx)
}

// awaitSyncStandbys waits until Patroni names as many synchronous
// standbys as the topology asks for: it picks them a loop after they
// stream, and refuses a switchover until it has.
func (h *patroni) awaitSyncStandbys(ctx context.Context) error {
	want := min(h.c.topo.SyncReplicas, len(h.c.liveReplicas()))
	limit := streamLimit + 2*h.loopWait()
	return await(ctx, limit, 200*time.Millisecond, func() (bool, error) {
		ms, err := h.members(ctx)
		n := 0
		for _, m := range ms {
			if m.Role == "sync_standby" {
				n++
			}
		}
		if err == nil && n < want {
			err = fmt.Errorf("patroni names %d synchronous standbys after %s, not %d", n, limit, want)
		}
		return err == nil, err
	})
}

// bootLimit bounds the wait for a leader: a new cluster runs initdb
// first, and a restarted one waits out an old leader's lease.
func (h *patroni) bootLimit(fresh bool) time.Duration {
	if fresh {
		return 120 * time.Second
	}
	return 2*h.ttl() + 60*time.Second
}

func (h *patroni) ttl() time.Duration {
	if h.c.topo.TTL > 0 {
		return h.c.topo.TTL
	}
	return defaultTTL
}

func (h *patroni) loopWait() time.Duration {
	if h.c.topo.LoopWait > 0 {
		return h.c.topo.LoopWait
	}
	return defaultLoopWait
}

// superPassword makes dbrig's account's password, which Patroni gives
// the superuser it creates, once: the password file every URL names.
func (c *Cluster) superPassword() error {
	if _, err := os.Stat(c.passPath()); err == nil {
		return nil
	}
	pw, err := server.NewPassword()
	if err != nil {
		return err
	}
	return atomicfile.Write(c.passPath(), passLine(ServerUser, pw), 0o600)
}

// password reads the password a password file of dbrig's holds.
func password(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line := string(bytes.TrimSpace(b))
	for i := len(line) - 1; i >= 0; i-- {
		if line[i] == ':' {
			return line[i+1:], nil
		}
	}
	return "", fmt.Errorf("%s: no password", path)
}

// startEtcd starts the cluster's etcd unless it runs, and waits until it
// answers.
func (h *patroni) startEtcd(ctx context.Context, bin string) error {
	c := h.c
	if c.st.Etcd == nil {
		var e etcdState
		var err error
		if e.ClientPort, err = server.FreeLoopbackPort(); err != nil {
			return err
		}
		if e.PeerPort, err = server.FreeLoopbackPort(); err != nil {
			return err
		}
		c.st.Etcd = &e
	}
	e := c.st.Etcd
	if !e.Daemon.Alive() {
		p := c.nodes[0]
		dir := filepath.Join(c.dir, "etcd")
		if err := p.Host.MakeDataDir(c.dir, dir, "etcd"); err != nil {
			return err
		}
		peer := "http://" + loopback + ":" + strconv.Itoa(e.PeerPort)
		// The nodes in spaces of their own reach it at the bridge's
		// address.
		clients := h.etcdURL()
		if c.net != nil {
			clients += ",http://" + join(c.net.Host.String(), e.ClientPort)
		}
		cmd := p.Command(ctx, bin, "--name", "dbrig", "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", clients, "--advertise-client-urls", clients,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", "dbrig="+peer)
		cmd.Dir = dir
		var err error
		if e.Daemon, err = server.StartDaemon(cmd, filepath.Join(c.dir, "etcd.log"), nil); err != nil {
			return err
		}
		if err := c.writeState(); err != nil {
			return err
		}
	}
	return await(ctx, 30*time.Second, 100*time.Millisecond, func() (bool, error) {
		var health struct{ Health string }
		err := getJSON(ctx, h.etcdURL()+"/health", &health)
		switch {
		case !e.Daemon.Alive():
			return false, giveUp{fmt.Errorf("etcd ended as it started: %s", server.LastLines(string(readLog(e.Daemon.Log)), 4))}
		case err == nil && health.Health != "true":
			err = fmt.Errorf("etcd says health %q", health.Health)
		}
		if err != nil {
			return false, fmt.Errorf("etcd not healthy after 30 s: %w", err)
		}
		return true, nil
	})
}

func readLog(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// etcdHost is where every node reaches etcd: loopback, or the bridge's
// address on the cluster's network.
func (h *patroni) etcdHost() string {
	if h.c.net != nil {
		return h.c.net.Host.String()
	}
	return loopback
}

func (h *patroni) etcdURL() string {
	return "http://" + loopback + ":" + strconv.Itoa(h.c.st.Etcd.ClientPort)
}

// scope is the cluster's name in etcd.
const scope = "dbrig"

// writeConfig writes node n's Patroni configuration, for its server's
// user alone: it holds the passwords.
func (h *patroni) writeConfig(s *Server, n nodeState, settings map[string]string) error {
	c := h.c
	super, err := password(c.passPath())
	if err != nil {
		return err
	}
	repl, _, err := c.replPassword()
	if err != nil {
		return err
	}
	if _, err := s.Bin(); err != nil {
		return err
	}
	if err := s.Host.MakeDataDir(s.Dir, s.DataDir(), "postgres"); err != nil {
		return err
	}
	sock, _, err := server.MakeSocketDir(s.Dir, socketFile, s.Host.Cred)
	if err != nil {
		return err
	}
	// Patroni writes a password file of its own, in a directory its
	// user may write.
	own := filepath.Join(s.Dir, "patroni")
	if err := s.Host.MakeDataDir(s.Dir, own, "patroni"); err != nil {
		return err
	}
	// The postmaster's log is the node's server log, as a server of
	// dbrig's own keeps it, rather than Patroni's output.
	if _, err := s.Host.MakeLog(s.Dir, s.LogPath(), "postgres"); err != nil {
		return err
	}
	// No cluster_name of the node's, as dbrig's own nodes have: Patroni
	// gives every node the cluster's scope as its cluster_name, on the
	// postmaster's command line, whatever the parameters say.
	params := map[string]any{"unix_socket_directories": sock,
		"logging_collector": "on", "log_directory": s.Dir, "log_filename": filepath.Base(s.LogPath()),
		"log_rotation_age": "0", "log_rotation_size": "0", "log_file_mode": "0644"}
	for k, v := range s.withStatsDefaults(context.Background(), settings) {
		params[k] = v
	}
	addr := s.peer.addr()
	listen := append([]string{loopback}, s.peer.listens()...)
	dcs := map[string]any{
		"ttl": int(h.ttl().Seconds()), "loop_wait": int(h.loopWait().Seconds()),
		"retry_timeout":           int(max(h.ttl()/3, 2*time.Second).Seconds()),
		"postgresql":              map[string]any{"use_slots": true},
		"synchronous_mode":        c.topo.SyncReplicas > 0,
		"maximum_lag_on_failover": 1 << 20,
	}
	if c.topo.SyncReplicas > 0 {
		dcs["synchronous_node_count"] = c.topo.SyncReplicas
	}
	hba := []string{"local all all scram-sha-256"}
	for _, from := range []string{"127.0.0.1/32", c.network()} {
		if from != "" {
			hba = append(hba, "host all all "+from+" scram-sha-256", "host replication "+ReplicationUser+" "+from+" scram-sha-256")
		}
	}
	cfg := map[string]any{
		"scope": scope,
		"name":  n.Name,
		"log":   map[string]any{"level": "INFO"},
		"restapi": map[string]any{
			"listen":          join(addr, n.API),
			"connect_address": join(addr, n.API),
		},
		"etcd3": map[string]any{"host": join(h.etcdHost(), c.st.Etcd.ClientPort)},
		"bootstrap": map[string]any{
			"dcs":    dcs,
			"initdb": []any{map[string]string{"auth-host": "scram-sha-256"}, map[string]string{"auth-local": "scram-sha-256"}, map[string]string{"encoding": "UTF8"}, map[string]string{"locale": "C"}},
			"pg_hba": hba,
		},
		"postgresql": map[string]any{
			"listen":          joinList(listen, n.Port),
			"connect_address": join(addr, n.Port),
			"data_dir":        s.DataDir(),
			"bin_dir":         s.Host.Bin,
			"pgpass":          filepath.Join(own, "pgpass"),
			"authentication": map[string]any{
				"superuser":   map[string]string{"username": ServerUser, "password": super},
				"replication": map[string]string{"username": ReplicationUser, "password": repl},
				"rewind":      map[string]string{"username": ServerUser, "password": super},
			},
			"parameters": params,
			"pg_hba":     hba,
		},
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := s.Host.WriteOwned(patroniConfig(s), b); err != nil {
		return err
	}
	b, err = os.ReadFile(c.passPath())
	if err != nil {
		return err
	}
	return atomicfile.Write(s.passPath(), b, 0o600)
}

func patroniConfig(s *Server) string { return filepath.Join(s.Dir, "patroni.yml") }

func join(host string, port int) string { return host + ":" + strconv.Itoa(port) }

// joinList is Patroni's listen: addresses, comma-separated, and a port.
func joinList(hosts []string, port int) string {
	out := ""
	for i, h := range hosts {
		if i > 0 {
			out += ","
		}
		out += h
	}
	return join(out, port)
}

// startNode starts node name's Patroni unless it runs.
func (h *patroni) startNode(ctx context.Context, bin, name string) error {
	c := h.c
	s, n := c.node(name)
	if n.Patroni != nil && n.Patroni.Alive() {
		return nil
	}
	cmd := s.Command(ctx, bin, patroniConfig(s))
	d, err := server.StartDaemon(cmd, filepath.Join(s.Dir, "patroni.log"), s.peer.start)
	if err != nil {
		return err
	}
	n.Patroni = &d
	if h.started == nil {
		h.started = map[string]bool{}
	}
	h.started[name] = true
	return c.writeState()
}

// forget drops node n's Patroni, stopped or lost with its node, which a
// wait for a leader watches no more.
func (h *patroni) forget(n *nodeState) {
	n.Patroni = nil
	delete(h.started, n.Name)
}

// member is a node as Patroni's REST API (/cluster) describes it.
type member struct {
	Name     string `json:"name"`
	Role     string `json:"role"`
	State    string `json:"state"`
	Timeline int    `json:"timeline"`
	Lag      any    `json:"lag"`
}

// members asks any node's Patroni that answers for the cluster's members.
func (h *patroni) members(ctx context.Context) ([]member, error) {
	var errs []error
	for i, n := range h.c.st.Nodes {
		if n.Patroni == nil || !n.Patroni.Alive() {
			continue
		}
		var cl struct{ Members []member }
		err := getJSON(ctx, h.apiURL(i)+"/cluster", &cl)
		if err == nil {
			return cl.Members, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, errors.New("no node's Patroni runs")
	}
	return nil, errors.Join(errs...)
}

func (h *patroni) apiURL(i int) string {
	return "http://" + join(h.c.nodes[i].peer.addr(), h.c.st.Nodes[i].API)
}

// awaitLeader waits up to limit for a leader other than not that runs,
// and names it.
func (h *patroni) awaitLeader(ctx context.Context, not string, limit time.Duration) (string, error) {
	leader := ""
	err := await(ctx, limit, 200*time.Millisecond, func() (bool, error) {
		ms, err := h.members(ctx)
		for _, m := range ms {
			if m.Role == "leader" && m.State == "running" && m.Name != not {
				leader = m.Name
				return true, nil
			}
		}
		if gone := h.ended(not); gone != nil {
			return false, giveUp{gone}
		}
		why := "no node became leader"
		if err != nil {
			why += ": " + err.Error()
		}
		return false, fmt.Errorf("patroni in %s: %s within %s (see %s)", h.c.dir, why, limit, filepath.Join(h.c.dir, "NODE", "patroni.log"))
	})
	return leader, err
}

// ended says which node's Patroni that this process started, but for
// the node not (lost on purpose), is gone, with the last words of its log.
func (h *patroni) ended(not string) error {
	for _, n := range h.c.st.Nodes {
		if n.Name != not && h.started[n.Name] && !n.Patroni.Alive() {
			return fmt.Errorf("%s's patroni ended: %s", n.Name, patroniWhy(string(readLog(n.Patroni.Log))))
		}
	}
	return nil
}

// patroniWhy is why a Patroni ended, from its log: its last error lines
// (its own, and what it relays of initdb's and the postmaster's), which
// come before the traceback its last lines are, with the traceback's end.
func patroniWhy(log string) string {
	errs := server.Messages(log, regexp.MustCompile(`^\S+ \S+ `), func(l string) bool {
		return strings.HasPrefix(l, "ERROR") || strings.HasPrefix(l, "CRITICAL") || strings.Contains(l, "FATAL")
	})
	if len(errs) > 3 {
		errs = errs[len(errs)-3:]
	}
	return strings.Join(append(errs, server.LastLines(log, 1)), "; ")
}

// awaitWrites waits until the leader name has left recovery and takes
// writes: Patroni names a leader as it asks its postmaster to promote.
func (h *patroni) awaitWrites(ctx context.Context, name string) error {
	if err := h.attachNodes(); err != nil {
		return err
	}
	s, _ := h.c.node(name)
	return await(ctx, 60*time.Second, 50*time.Millisecond, func() (bool, error) {
		var recovery bool
		err := s.withConn(ctx, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&recovery)
		})
		if err == nil && !recovery {
			return true, nil
		}
		return false, fmt.Errorf("%s, Patroni's leader, still in recovery after 60 s (%v)", name, err)
	})
}

// attachNodes has each node's server find the postmaster Patroni runs.
func (h *patroni) attachNodes() error {
	for _, s := range h.c.nodes {
		s.Live.Down()
		if s.Exists() {
			if err := s.Attach(); err != nil {
				return err
			}
		}
	}
	return nil
}

// stop stops each node's Patroni, which stops its postmaster, the
// replicas first so that none takes the leader's place, then etcd.
func (h *patroni) stop(ctx context.Context) error {
	c := h.c
	var errs []error
	for _, leaderLast := range []bool{false, true} {
		for i := range c.st.Nodes {
			n := &c.st.Nodes[i]
			if (n.Name == c.st.Primary) != leaderLast || n.Patroni == nil {
				continue
			}
			if err := n.Patroni.Stop(ctx, 90*time.Second); err != nil {
				errs = append(errs, fmt.Errorf("%s's patroni: %w", n.Name, err))
				continue
			}
			h.forget(n)
			c.nodes[i].Live.Down()
		}
	}
	if c.st.Etcd != nil {
		errs = append(errs, c.st.Etcd.Daemon.Stop(ctx, 30*time.Second))
	}
	return errors.Join(errs...)
}

// failover ends the leader's Patroni and its postmaster with SIGKILL, as
// the loss of its machine would (a postmaster killed alone is restarted
// in place by its Patroni), and waits for Patroni to promote another
// node once the leader's lease runs out.
func (h *patroni) failover(ctx context.Context, note func(string)) (string, error) {
	c := h.c
	old := c.st.Primary
	s, n := c.node(old)
	pid := 0
	if pm, err := readPostmasterPID(s.DataDir()); err == nil {
		pid = pm.pid
	}
	if n.Patroni != nil {
		if err := n.Patroni.Kill(); err != nil {
			return "", err
		}
	}
	if pid > 0 {
		if _, err := server.Kill(ctx, s); err != nil {
			return "", err
		}
	}
	killed := time.Now()
	note(fmt.Sprintf("%s lost: SIGKILL to its Patroni (pid %d) and its postmaster (pid %d)", old, n.Patroni.PID, pid))
	n.Lost = true
	s.Live.Down()
	if err := c.writeState(); err != nil {
		return "", err
	}
	leader, err := h.awaitLeader(ctx, old, 3*h.ttl()+60*time.Second)
	if err != nil {
		return "", err
	}
	if err := h.awaitWrites(ctx, leader); err != nil {
		return "", err
	}
	note(fmt.Sprintf("%s promoted by Patroni, %.1f s after the loss (ttl %s, loop_wait %s)", leader, time.Since(killed).Seconds(), h.ttl(), h.loopWait()))
	return leader, nil
}

// switchover asks the leader's Patroni to hand its role to another node.
func (h *patroni) switchover(ctx context.Context, note func(string)) (string, error) {
	c := h.c
	old := c.st.Primary
	body, _ := json.Marshal(map[string]string{"leader": old})
	i := c.index(old)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.apiURL(i)+"/switchover", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	started := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("patroni switchover: %w", err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("patroni switchover: %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	leader, err := h.awaitLeader(ctx, old, 60*time.Second)
	if err == nil {
		err = h.awaitWrites(ctx, leader)
	}
	if err != nil {
		return "", err
	}
	note(fmt.Sprintf("%s leader after a switchover through Patroni, %.1f s after it was asked", leader, time.Since(started).Seconds()))
	return leader, nil
}

// describe adds Patroni's view of each node: its role in Patroni's words
// and whether a replica is the synchronous one.
func (h *patroni) describe(ctx context.Context, nodes []server.Node) {
	ms, err := h.members(ctx)
	if err != nil {
		return
	}
	for _, m := range ms {
		for i := range nodes {
			if nodes[i].Name != m.Name {
				continue
			}
			nodes[i].State = "patroni " + m.Role + ", " + m.State
			if m.Role == "sync_standby" && nodes[i].Sync == "" {
				nodes[i].Sync = "sync"
			}
		}
	}
}

// getJSON reads url's JSON into v.
func getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
