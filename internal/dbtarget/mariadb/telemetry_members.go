package mariadb

import (
	"context"
	"database/sql"
	"strings"

	"github.com/dbrig/dbrig/internal/telemetry"
)

var (
	_ telemetry.MemberSource = (*source)(nil)
	_ telemetry.NodeSource   = (*source)(nil)
)

// Nodes names each node of a target of several that answers, by its
// address, with its server's process where it runs on this host, so
// that every node's CPU counts as the server's; a target of one server
// has none.
func (s *source) Nodes(ctx context.Context) ([]telemetry.Node, error) {
	if len(s.t.nodes.pools) < 2 {
		return nil, nil
	}
	var out []telemetry.Node
	_, err := s.t.eachNode(ctx, func(i int, db *sql.DB) error {
		pid, _, err := localServer(ctx, db)
		if err == nil {
			out = append(out, telemetry.Node{Name: s.t.nodes.addrs[i], PID: pid})
		}
		return err
	})
	return out, err
}

// memberKeys maps a Galera node's status (SHOW GLOBAL STATUS) to the
// telemetry's member keys.
var memberKeys = map[string]string{
	"wsrep_flow_control_paused_ns": telemetry.MemberPausedNS,
	"wsrep_flow_control_sent":      telemetry.MemberFlowSent,
	"wsrep_local_cert_failures":    telemetry.MemberCertFailures,
	"wsrep_local_bf_aborts":        telemetry.MemberBFAborts,
	"wsrep_local_send_queue":       telemetry.MemberSendQueue,
	"wsrep_local_recv_queue":       telemetry.MemberRecvQueue,
	"wsrep_replicated_bytes":       telemetry.MemberReplicatedBytes,
	"wsrep_received_bytes":         telemetry.MemberReceivedBytes,
	"wsrep_cluster_size":           telemetry.MemberSize,
	"Com_commit":                   telemetry.MemberCommits,
}

// membersQuery reads memberKeys' figures in one statement.
var membersQuery = func() string {
	names := make([]string, 0, len(memberKeys))
	for name := range memberKeys {
		names = append(names, "'"+name+"'")
	}
	return "SHOW GLOBAL STATUS WHERE Variable_name IN (" + strings.Join(names, ",") + ")"
}()

// Members reads each node of the target that answers, by its address,
// where it is a node of a Galera cluster; a server without the provider
// loaded (no cluster size) is none, and a target of one such server
// gives none.
func (s *source) Members(ctx context.Context) ([]telemetry.Member, error) {
	var out []telemetry.Member
	_, err := s.t.eachNode(ctx, func(i int, db *sql.DB) error {
		counters, err := readStatus(ctx, db, membersQuery, memberKeys)
		if err == nil && counters[telemetry.MemberSize] > 0 {
			out = append(out, telemetry.Member{Name: s.t.nodes.addrs[i], Counters: counters})
		}
		return err
	})
	return out, err
}
