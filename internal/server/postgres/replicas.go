//go:build unix

package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/atomicfile"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/jackc/pgx/v5"
)

// replicas is dbrig keeping a cluster itself, without an HA manager: it
// makes each replica from the primary with pg_basebackup, through a
// replication slot of the replica's own, and changes the primary only
// when told.
type replicas struct{ c *Cluster }

// streamLimit bounds the wait for every replica to stream.
const streamLimit = 90 * time.Second

func (r *replicas) start(ctx context.Context, settings map[string]string) error {
	c := r.c
	all := c.nodeSettings(settings)
	p := c.primary()
	if !p.Exists() {
		c.tell("making %s, the primary (initdb)", c.st.Primary)
		if err := c.makePrimary(ctx, p); err != nil {
			return err
		}
	}
	if err := c.writeHBA(p); err != nil {
		return err
	}
	c.tell("starting %s, the primary", c.st.Primary)
	if err := p.Start(ctx, all); err != nil {
		return err
	}
	if err := c.ensureReplicationRole(ctx, p); err != nil {
		return err
	}
	for i, s := range c.nodes {
		if s == p {
			continue
		}
		n := &c.st.Nodes[i]
		if n.Lost || !s.Exists() {
			c.tell("making %s from %s (pg_basebackup)", n.Name, c.st.Primary)
			if err := r.clone(ctx, s, n.Name, p); err != nil {
				return fmt.Errorf("making %s from the primary: %w", n.Name, err)
			}
			n.Lost = false
			if err := c.writeState(); err != nil {
				return err
			}
		} else if err := c.follow(s, n.Name, p); err != nil {
			// A network made anew may give the primary another address.
			return err
		}
		if err := c.writeHBA(s); err != nil {
			return err
		}
		c.tell("starting %s, a replica of %s", n.Name, c.st.Primary)
		if err := s.Start(ctx, all); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	c.tell("waiting for the replicas to stream")
	if err := c.awaitStreaming(ctx, p, c.liveReplicas()); err != nil {
		return err
	}
	return c.awaitSync(ctx, p)
}

// nodeSettings are what every node starts with: the user's settings and
// the cluster's own, the same on each node so that any can be primary.
func (c *Cluster) nodeSettings(settings map[string]string) map[string]string {
	all := map[string]string{}
	for k, v := range settings {
		all[k] = v
	}
	if names := c.syncNames(); names != "" {
		all["synchronous_standby_names"] = names
	}
	return all
}

// makePrimary makes the first node's data (initdb), with the cluster's
// access rules, and the password file every node's URLs name.
func (c *Cluster) makePrimary(ctx context.Context, p *Server) error {
	if err := p.Init(ctx); err != nil {
		return err
	}
	b, err := os.ReadFile(p.passPath())
	if err != nil {
		return err
	}
	return atomicfile.Write(c.passPath(), b, 0o600)
}

// writeHBA gives node s the cluster's access rules, for the network it
// has now: a network made anew at a start may have another prefix.
func (c *Cluster) writeHBA(s *Server) error {
	return s.Host.WriteOwned(filepath.Join(s.DataDir(), "pg_hba.conf"), []byte(clusterHBA(c.network())))
}

// network is the cluster's own network's prefix, "" without one.
func (c *Cluster) network() string {
	if c.net == nil {
		return ""
	}
	return c.net.Prefix.String()
}

// liveReplicas names the replicas that should be streaming: every node
// but the primary and the lost.
func (c *Cluster) liveReplicas() []string {
	var out []string
	for _, n := range c.st.Nodes {
		if n.Name != c.st.Primary && !n.Lost {
			out = append(out, n.Name)
		}
	}
	return out
}

// clone makes replica s, named name, from the running primary p: its
// slot on p, a base backup streamed through it, and what makes it a
// standby of p. Whatever s held before (a node lost at a failover) goes.
func (r *replicas) clone(ctx context.Context, s *Server, name string, p *Server) error {
	c := r.c
	if err := s.unmake(); err != nil {
		return err
	}
	if _, err := s.Bin(); err != nil {
		return err
	}
	if err := s.Host.MakeDataDir(s.Dir, s.DataDir(), "postgres"); err != nil {
		return err
	}
	pass, err := c.giveReplPass(s)
	if err != nil {
		return err
	}
	if err := makeSlot(ctx, p, name, true); err != nil {
		return err
	}
	info := conninfo(name, p.peer.addr(), p.Port(), pass)
	out, err := s.Command(ctx, "pg_basebackup", "-D", s.DataDir(), "-d", info, "-X", "stream", "-S", name, "-c", "fast", "-w").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_basebackup: %v: %s", err, server.LastLines(string(out), 4))
	}
	if err := c.follow(s, name, p); err != nil {
		return err
	}
	b, err := os.ReadFile(c.passPath())
	if err != nil {
		return err
	}
	return atomicfile.Write(s.passPath(), b, 0o600)
}

// unmake removes what the node held: its data, and its socket's lock,
// which names the lost postmaster's PID; a zombie the host's init has
// not reaped yet still holds that PID, and a new postmaster would take
// it for a live one.
func (s *Server) unmake() error {
	if err := os.RemoveAll(s.DataDir()); err != nil {
		return err
	}
	locks, _ := filepath.Glob(filepath.Join(s.Dir, "sock", ".s.PGSQL.*"))
	for _, l := range locks {
		if err := os.Remove(l); err != nil {
			return err
		}
	}
	return nil
}

// makeSlot makes the physical replication slot name on the running
// primary p; fresh drops one that is there first, whose WAL position is
// another copy's.
func makeSlot(ctx context.Context, p *Server, name string, fresh bool) error {
	return p.withConn(ctx, func(conn *pgx.Conn) error {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)", name).Scan(&exists); err != nil {
			return err
		}
		if exists && !fresh {
			return nil
		}
		if exists {
			if _, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", name); err != nil {
				return err
			}
		}
		_, err := conn.Exec(ctx, "SELECT pg_create_physical_replication_slot($1)", name)
		return err
	})
}

// follow makes the stopped node s, named name, a standby of p: its
// standby.signal, and p's address and its own slot in
// postgresql.auto.conf, replacing what named another primary there.
func (c *Cluster) follow(s *Server, name string, p *Server) error {
	pass, err := c.giveReplPass(s)
	if err != nil {
		return err
	}
	if err := s.Host.WriteOwned(filepath.Join(s.DataDir(), "standby.signal"), nil); err != nil {
		return err
	}
	auto := filepath.Join(s.DataDir(), "postgresql.auto.conf")
	b, err := os.ReadFile(auto)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	kept := primaryLineRE.ReplaceAllString(string(b), "")
	kept += fmt.Sprintf("primary_conninfo = %s\nprimary_slot_name = %s\n", quoteLiteral(conninfo(name, p.peer.addr(), p.Port(), pass)), quoteLiteral(name))
	return s.Host.WriteOwned(auto, []byte(kept))
}

// primaryLineRE matches the lines of postgresql.auto.conf that name a
// standby's primary.
var primaryLineRE = regexp.MustCompile(`(?m)^\s*primary_(conninfo|slot_name)\s*=.*\n?`)

// awaitStreaming waits until each of names streams from the primary p.
func (c *Cluster) awaitStreaming(ctx context.Context, p *Server, names []string) error {
	return await(ctx, streamLimit, 200*time.Millisecond, func() (bool, error) {
		streaming := map[string]bool{}
		err := p.withConn(ctx, func(conn *pgx.Conn) error {
			rows, err := conn.Query(ctx, "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'")
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					return err
				}
				streaming[n] = true
			}
			return rows.Err()
		})
		if err != nil {
			return false, err
		}
		var missing, logs []string
		for _, n := range names {
			if !streaming[n] {
				missing = append(missing, n)
				logs = append(logs, filepath.Join(c.dir, n, "server.log"))
			}
		}
		if len(missing) == 0 {
			return true, nil
		}
		return false, fmt.Errorf("%s not streaming from the primary after %s: see %s", strings.Join(missing, ", "), streamLimit, strings.Join(logs, ", "))
	})
}

// awaitSync waits until the primary p waits for as many replicas as the
// topology says, so that a run starts on the cluster it was told of.
func (c *Cluster) awaitSync(ctx context.Context, p *Server) error {
	want := min(c.topo.SyncReplicas, len(c.liveReplicas()))
	return await(ctx, streamLimit, 200*time.Millisecond, func() (bool, error) {
		var n int
		err := p.withConn(ctx, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')").Scan(&n)
		})
		if err == nil && n < want {
			err = fmt.Errorf("the primary waits for %d synchronous replicas after %s, not %d", n, streamLimit, want)
		}
		return err == nil, err
	})
}

func (r *replicas) stop(ctx context.Context) error {
	c := r.c
	// The primary first: a fast shutdown sends the replicas everything up
	// to its shutdown checkpoint before it ends.
	errs := []error{ignoreCrash(c.primary().Stop(ctx))}
	for _, s := range c.nodes {
		if s != c.primary() {
			errs = append(errs, ignoreCrash(s.Stop(ctx)))
		}
	}
	return errors.Join(errs...)
}

// ignoreCrash drops the news that a node stopped was found dead: a lost
// node is dead by design.
func ignoreCrash(err error) error {
	if errors.Is(err, server.ErrCrashed) {
		return nil
	}
	return err
}

// failover kills the primary's postmaster, as the loss of its machine
// would end it, then promotes the replica that received the most of its
// WAL and has the others follow it.
func (r *replicas) failover(ctx context.Context, note func(string)) (string, error) {
	c := r.c
	p := c.primary()
	_, old := c.node(c.st.Primary)
	if p.Running() {
		pid, err := server.Kill(ctx, p)
		if err != nil {
			return "", err
		}
		note(fmt.Sprintf("%s lost: SIGKILL to its postmaster (pid %d)", old.Name, pid))
	}
	if err := p.Forget(); err != nil {
		return "", err
	}
	old.Lost = true
	best, err := r.mostAdvanced(ctx)
	if err != nil {
		return "", err
	}
	return best, r.promote(ctx, best, note)
}

// switchover stops the primary cleanly, has the replica that received
// the most of its WAL take everything up to the shutdown, promotes it,
// and makes the old primary a standby of it.
func (r *replicas) switchover(ctx context.Context, note func(string)) (string, error) {
	c := r.c
	p := c.primary()
	oldName := c.st.Primary
	best, err := r.mostAdvanced(ctx)
	if err != nil {
		return "", err
	}
	if err := p.Stop(ctx); err != nil {
		return "", err
	}
	note(fmt.Sprintf("%s stopped for a switchover to %s", oldName, best))
	end, err := shutdownLSN(ctx, p)
	if err != nil {
		return "", err
	}
	s, _ := c.node(best)
	if err := awaitReceived(ctx, s, end); err != nil {
		return "", err
	}
	if err := r.promote(ctx, best, note); err != nil {
		return "", err
	}
	if err := c.follow(p, oldName, s); err != nil {
		return "", err
	}
	if err := makeSlot(ctx, s, oldName, true); err != nil {
		return "", err
	}
	if err := p.Start(ctx, c.nodeSettings(c.st.Settings)); err != nil {
		return "", fmt.Errorf("%s as a standby of %s: %w", oldName, best, err)
	}
	if err := c.awaitStreaming(ctx, s, []string{oldName}); err != nil {
		return "", err
	}
	note(fmt.Sprintf("%s streams from %s", oldName, best))
	return best, nil
}

// mostAdvanced names the running replica that received the most WAL.
func (r *replicas) mostAdvanced(ctx context.Context) (string, error) {
	c := r.c
	best, bestAt := "", uint64(0)
	var why []string
	for i, s := range c.nodes {
		n := c.st.Nodes[i]
		if n.Name == c.st.Primary || n.Lost || !s.Running() {
			continue
		}
		var at string
		err := s.withConn(ctx, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, "SELECT greatest(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::text").Scan(&at)
		})
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", n.Name, err))
			continue
		}
		if pos, err := lsn(at); err == nil && (best == "" || pos > bestAt) {
			best, bestAt = n.Name, pos
		}
	}
	if best == "" {
		return "", fmt.Errorf("no replica left to promote in %s (%s)", c.dir, strings.Join(append(why, "every other node is down or lost"), "; "))
	}
	return best, nil
}

// promote makes the replica name the primary, and every other live
// replica follow it through a slot of its own there.
func (r *replicas) promote(ctx context.Context, name string, note func(string)) error {
	c := r.c
	s, _ := c.node(name)
	var done bool
	err := s.withConn(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, "SELECT pg_promote(true, 60)").Scan(&done)
	})
	if err == nil && !done {
		err = errors.New("not promoted within 60 s")
	}
	if err != nil {
		return fmt.Errorf("promoting %s: %w", name, err)
	}
	note(fmt.Sprintf("%s promoted", name))
	c.st.Primary = name
	for i, o := range c.nodes {
		n := c.st.Nodes[i]
		if n.Name == name || n.Lost || !o.Running() {
			continue
		}
		if err := makeSlot(ctx, s, n.Name, true); err != nil {
			return err
		}
		pass := filepath.Join(o.Dir, replPassFile)
		err := o.withConn(ctx, func(conn *pgx.Conn) error {
			for _, set := range []string{
				"ALTER SYSTEM SET primary_conninfo = " + quoteLiteral(conninfo(n.Name, s.peer.addr(), s.Port(), pass)),
				"ALTER SYSTEM SET primary_slot_name = " + quoteLiteral(n.Name),
				"SELECT pg_reload_conf()",
			} {
				if _, err := conn.Exec(ctx, set); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("pointing %s at %s: %w", n.Name, name, err)
		}
	}
	return nil
}

// shutdownLSN is where the stopped node p's last checkpoint, its
// shutdown's, is, as pg_controldata reads it.
func shutdownLSN(ctx context.Context, p *Server) (uint64, error) {
	out, err := p.Command(ctx, "pg_controldata", "-D", p.DataDir()).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pg_controldata: %v: %s", err, server.LastLines(string(out), 2))
	}
	m := checkpointRE.FindStringSubmatch(string(out))
	if m == nil {
		return 0, fmt.Errorf("pg_controldata in %s: no latest checkpoint location", p.DataDir())
	}
	return lsn(m[1])
}

var checkpointRE = regexp.MustCompile(`(?m)^Latest checkpoint location:\s+(\S+)`)

// awaitReceived waits until replica s has received WAL past end.
func awaitReceived(ctx context.Context, s *Server, end uint64) error {
	return await(ctx, 30*time.Second, 100*time.Millisecond, func() (bool, error) {
		var at string
		err := s.withConn(ctx, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, "SELECT coalesce(pg_last_wal_receive_lsn(), '0/0')::text").Scan(&at)
		})
		if err == nil {
			var pos uint64
			if pos, err = lsn(at); err == nil && pos > end {
				return true, nil
			}
		}
		return false, fmt.Errorf("%s did not receive the primary's shutdown checkpoint within 30 s (at %s): %v", s.Dir, at, err)
	})
}

// describe says which nodes stream, as the primary sees them; lagOf has
// put that in already, and a live replica that does not is said so.
func (r *replicas) describe(_ context.Context, nodes []server.Node) {
	for i := range nodes {
		if nodes[i].Role == server.RoleReplica && nodes[i].Sync == "" {
			nodes[i].State, nodes[i].Note = "not streaming", "a replica the primary does not see; its log says why"
		}
	}
}
