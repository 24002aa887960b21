//go:build unix

package mariadb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
)

// view is a node's own view of its cluster, from wsrep's status.
type view struct {
	// state is what the node does (wsrep_local_state_comment: Synced,
	// Joining, Donor/Desynced, ...); status whether the nodes it sees are
	// the cluster's primary component (wsrep_cluster_status: Primary,
	// non-Primary), and size how many they are.
	state, status string
	size          int
	// ready says the node takes queries (wsrep_ready).
	ready bool
}

func (s *Server) view(ctx context.Context) (view, error) {
	db, err := s.admin("")
	if err != nil {
		return view{}, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN
		('wsrep_local_state_comment', 'wsrep_cluster_status', 'wsrep_cluster_size', 'wsrep_ready')`)
	if err != nil {
		return view{}, err
	}
	defer rows.Close()
	var v view
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return view{}, err
		}
		switch strings.ToLower(name) {
		case "wsrep_local_state_comment":
			v.state = value
		case "wsrep_cluster_status":
			v.status = value
		case "wsrep_cluster_size":
			v.size, _ = strconv.Atoi(value)
		case "wsrep_ready":
			v.ready = value == "ON"
		}
	}
	return v, rows.Err()
}

// syncLimit bounds the wait for a node that accepts connections to be
// synced with the others: it applies first what it received while it
// joined.
const syncLimit = 10 * time.Minute

// awaitSynced waits until the node s, just started, is synced with the
// cluster and takes queries.
func (c *Cluster) awaitSynced(ctx context.Context, s *Server) error {
	deadline := time.Now().Add(syncLimit)
	for {
		v, err := s.view(ctx)
		if err == nil && v.ready && v.state == "Synced" {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("%s, wsrep_ready %v", v.state, v.ready)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("mariadbd in %s ended before it was synced with the cluster: see %s", s.Dir, s.LogPath())
		case <-ctx.Done():
			return fmt.Errorf("waiting for mariadbd in %s to sync with the cluster: %w", s.Dir, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mariadbd in %s not synced with the cluster within %s (%v): see %s", s.Dir, syncLimit, err, s.LogPath())
		}
	}
}

// Nodes reports every node: whether it runs, and its view of the
// cluster.
func (c *Cluster) Nodes(ctx context.Context) ([]server.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return nil, err
	}
	out := make([]server.Node, len(c.nodes))
	for i := range c.nodes {
		out[i] = c.describeNode(ctx, i)
	}
	return out, nil
}

// describeNode is what the i-th node says of itself.
func (c *Cluster) describeNode(ctx context.Context, i int) server.Node {
	s, n := c.nodes[i], c.st.Nodes[i]
	node := server.Node{Name: n.Name, Role: server.RoleDown, State: "stopped", Addr: loopback(n.Port),
		URL: s.urlAt("mysql", n.Port), LagBytes: -1}
	switch {
	case n.Lost:
		node.State, node.Note = "lost", "killed as a lost machine would be; the next start brings it back"
	case !s.hasData():
		node.State = "not joined yet"
	case !c.running && c.st.Bootstrap == n.Name:
		node.Note = "stopped last: the next start founds the cluster from it"
	}
	if !node.ReadStatus(ctx, s, n.Lost) {
		return node
	}
	v, err := s.view(ctx)
	if err != nil {
		node.Note = "not answering: " + err.Error()
		return node
	}
	node.Role, node.State = server.RoleMember, v.state
	node.ClusterStatus, node.ClusterSize, node.Ready = v.status, v.size, v.ready
	return node
}

// KillNode ends the node named name as the loss of its machine would:
// SIGKILL to its mariadbd. The others go on without it, once they have
// found it gone; the next start brings it back, and it takes what it
// missed from them.
var _ server.Rejoiner = (*Cluster)(nil)

// Rejoin starts again every node KillNode lost, while the others run:
// each joins them, taking what it missed by state transfer, and is
// waited for until synced. It names the nodes it started.
func (c *Cluster) Rejoin(ctx context.Context) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return nil, err
	}
	provider, err := findProvider()
	if err != nil {
		return nil, err
	}
	var back []string
	for i, s := range c.nodes {
		n := &c.st.Nodes[i]
		if !n.Lost || s.Running() {
			continue
		}
		c.say.Tell("%s: rejoining, taking what it missed from a running node", n.Name)
		s.member.provider, s.member.bootstrap = provider, false
		if err := s.Start(ctx, c.st.Settings); err == nil {
			err = c.awaitSynced(ctx, s)
		} else {
			return back, fmt.Errorf("%s: %w", n.Name, err)
		}
		n.Lost = false
		back = append(back, n.Name)
		if err := c.writeState(); err != nil {
			return back, err
		}
	}
	return back, nil
}

func (c *Cluster) KillNode(ctx context.Context, name string) (server.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.attach(); err != nil {
		return server.Node{}, err
	}
	i := c.index(name)
	if i < 0 {
		names := make([]string, len(c.st.Nodes))
		for j, n := range c.st.Nodes {
			names[j] = n.Name
		}
		return server.Node{}, exitcode.Userf("the cluster in %s has no node %q: its nodes are %s", c.dir, name, strings.Join(names, ", "))
	}
	s := c.nodes[i]
	if !s.Running() {
		return server.Node{}, exitcode.Userf("%s of the cluster in %s is not running: there is nothing to kill", name, c.dir)
	}
	if _, err := server.Kill(ctx, s); err != nil {
		return server.Node{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := s.Forget(); err != nil {
		return server.Node{}, err
	}
	c.st.Nodes[i].Lost = true
	c.running = c.anyRunning() != nil
	if err := c.writeState(); err != nil {
		return server.Node{}, err
	}
	return c.describeNode(ctx, i), nil
}
