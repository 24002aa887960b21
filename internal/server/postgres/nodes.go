//go:build unix

package postgres

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/atomicfile"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/jackc/pgx/v5"
)

// What every keeper of a cluster does alike: the nodes' settings and
// access rules, the role replicas stream as, and what each node says of
// itself.

// ReplicationUser is the role replicas stream from the primary as, with
// a password generated for the cluster, kept in Dir/replication.pgpass
// and, for the server's user, in each node's directory.
const ReplicationUser = "dbrig_replication"

// replPassFile is a password file of the replication role's.
const replPassFile = "replication.pgpass"

// clusterHBA is a node's pg_hba.conf: every role with its password, on
// the socket and from where the nodes and clients are (loopback, and the
// cluster's network where it has one), and replication for the
// replication role alone.
func clusterHBA(network string) string {
	var b strings.Builder
	b.WriteString("# Written by dbrig: every role with its password, no trust; replication for " + ReplicationUser + " alone.\n")
	b.WriteString("local  all          all  scram-sha-256\n")
	for _, from := range []string{"127.0.0.1/32", network} {
		if from == "" {
			continue
		}
		fmt.Fprintf(&b, "host   all          all  %s  scram-sha-256\n", from)
		fmt.Fprintf(&b, "host   replication  %s  %s  scram-sha-256\n", ReplicationUser, from)
	}
	return b.String()
}

// syncNames is synchronous_standby_names for the topology: any K of the
// nodes (a quorum, sync_state "quorum"), the same on every node, so that
// whichever is promoted waits for K of the others.
func (c *Cluster) syncNames() string {
	if c.topo.SyncReplicas == 0 {
		return ""
	}
	names := make([]string, len(c.st.Nodes))
	for i, n := range c.st.Nodes {
		names[i] = n.Name
	}
	return fmt.Sprintf("ANY %d (%s)", c.topo.SyncReplicas, strings.Join(names, ", "))
}

// replPassword is the replication role's password, made on first use.
func (c *Cluster) replPassword() (pw string, made bool, err error) {
	path := filepath.Join(c.dir, replPassFile)
	if b, err := os.ReadFile(path); err == nil {
		fields := strings.Split(strings.TrimSpace(string(b)), ":")
		return fields[len(fields)-1], false, nil
	}
	if pw, err = server.NewPassword(); err != nil {
		return "", false, err
	}
	return pw, true, atomicfile.Write(path, passLine(ReplicationUser, pw), 0o600)
}

func passLine(user, pw string) []byte { return []byte("*:*:*:" + user + ":" + pw + "\n") }

// ensureReplicationRole makes the replication role on the running
// primary p, once; its password reaches the server as a SCRAM verifier.
func (c *Cluster) ensureReplicationRole(ctx context.Context, p *Server) error {
	pw, made, err := c.replPassword()
	if err != nil {
		return err
	}
	return p.withConn(ctx, func(conn *pgx.Conn) error {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", ReplicationUser).Scan(&exists); err != nil {
			return err
		}
		if exists && !made {
			return nil
		}
		verifier, err := scramVerifier(pw)
		if err != nil {
			return err
		}
		verb := "CREATE"
		if exists {
			verb = "ALTER"
		}
		// The role is made before any replica streams, which a
		// synchronous primary's commits would wait for: this one
		// commits on the primary alone.
		if _, err := conn.Exec(ctx, "SET synchronous_commit = local"); err != nil {
			return err
		}
		_, err = conn.Exec(ctx, verb+" ROLE "+ReplicationUser+" WITH REPLICATION LOGIN PASSWORD "+quoteLiteral(verifier))
		return err
	})
}

// giveReplPass gives node s's server user the replication role's
// password file, which its primary_conninfo names.
func (c *Cluster) giveReplPass(s *Server) (string, error) {
	pw, _, err := c.replPassword()
	if err != nil {
		return "", err
	}
	if _, err := s.Bin(); err != nil { // the server's user, whose file it is
		return "", err
	}
	path := filepath.Join(s.Dir, replPassFile)
	return path, s.Host.WriteOwned(path, passLine(ReplicationUser, pw))
}

// conninfo is how node s reaches the node at addr:port to stream from
// it, as the replication role, under its own name.
func conninfo(name, addr string, port int, passfile string) string {
	kv := []string{"host", addr, "port", strconv.Itoa(port), "user", ReplicationUser,
		"passfile", passfile, "application_name", name, "sslmode", "disable", "connect_timeout", "5"}
	var parts []string
	for i := 0; i < len(kv); i += 2 {
		parts = append(parts, kv[i]+"='"+strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(kv[i+1])+"'")
	}
	return strings.Join(parts, " ")
}

// quoteLiteral is s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// withConn runs fn on a connection to the node's postgres database.
func (s *Server) withConn(ctx context.Context, fn func(*pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.urlAt("postgres", s.Port()))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return fn(conn)
}

// addrOf is where node s listens, as host:port.
func (c *Cluster) addrOf(i int) string {
	return net.JoinHostPort(c.nodes[i].peer.addr(), strconv.Itoa(c.st.Nodes[i].Port))
}

// describeNode is what node s says of itself: whether it runs, its role,
// timeline and where its log is.
func (c *Cluster) describeNode(ctx context.Context, s *Server, n nodeState) server.Node {
	i := c.index(n.Name)
	node := server.Node{Name: n.Name, Role: server.RoleDown, State: "stopped", Addr: c.addrOf(i), URL: s.urlAt("postgres", n.Port),
		LagBytes: -1, Delay: s.peer.delay}
	if n.Lost {
		node.State, node.Note = "lost", "lost at a failover; the next start makes it again from the primary"
	}
	if !s.Exists() {
		node.State = "not made"
		return node
	}
	if !node.ReadStatus(ctx, s, n.Lost) {
		return node
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(qctx, node.URL)
	if err != nil {
		node.Note = "not answering: " + err.Error()
		return node
	}
	defer conn.Close(context.WithoutCancel(qctx))
	var recovery bool
	var lsn string
	var tli *int
	err = conn.QueryRow(qctx, `SELECT pg_is_in_recovery(),
		coalesce(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text, ''),
		CASE WHEN pg_is_in_recovery() THEN (SELECT received_tli FROM pg_stat_wal_receiver)
			ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END`).Scan(&recovery, &lsn, &tli)
	if err != nil {
		node.Note = "not answering: " + err.Error()
		return node
	}
	node.Role, node.LSN = server.RolePrimary, lsn
	if recovery {
		node.Role = server.RoleReplica
	}
	if tli != nil {
		node.Timeline = *tli
	}
	return node
}

// index is the position of the node named name.
func (c *Cluster) index(name string) int {
	for i, n := range c.st.Nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}

// lagOf adds to nodes what the primary p knows of each replica that
// streams from it: how it waits for its commits, and how far behind it
// replays.
func lagOf(ctx context.Context, p *Server, nodes []server.Node) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = p.withConn(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT application_name, state, sync_state,
			coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), -1)::bigint,
			coalesce(extract(epoch FROM replay_lag), 0)::float8
			FROM pg_stat_replication`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, state, sync string
			var bytes int64
			var lag float64
			if err := rows.Scan(&name, &state, &sync, &bytes, &lag); err != nil {
				return err
			}
			for i := range nodes {
				if nodes[i].Name == name {
					nodes[i].State, nodes[i].Sync, nodes[i].LagBytes = state, sync, bytes
					nodes[i].Lag = time.Duration(lag * float64(time.Second))
				}
			}
		}
		return rows.Err()
	})
}

// lsn reads a WAL position written as PostgreSQL writes it ("16/B374D848").
func lsn(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%q is not a WAL position", s)
	}
	return h<<32 | l, nil
}
