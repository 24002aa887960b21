package postgres

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dbrig/dbrig/internal/telemetry"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var _ telemetry.NodeSource = (*source)(nil)

// Nodes reaches each host of a multi-host URL (a replicated server's
// primary and standbys, target_session_attrs choosing among them) on its
// own, whatever its role, and asks it its name and where its postmaster
// is on this host (localServer). A node is named by its cluster_name,
// which a cluster dbrig keeps gives it (node1, node2...); where that is
// empty, or shared by another node (Patroni gives every node the
// cluster's scope), by its host and port. A node that does not answer is
// left out; a URL of one host has no nodes.
func (s *source) Nodes(ctx context.Context) ([]telemetry.Node, error) {
	hosts := hostsOf(&s.t.cfg.Config)
	if len(hosts) < 2 {
		return nil, nil
	}
	nodes := make([]telemetry.Node, len(hosts))
	names := make([]string, len(hosts))
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			names[i], nodes[i].PID, errs[i] = s.askNode(ctx, h)
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for i := range hosts {
		if errs[i] == nil {
			seen[names[i]]++
		}
	}
	var out []telemetry.Node
	var why []string
	for i, h := range hosts {
		if errs[i] != nil {
			why = append(why, addrOf(h[0])+": "+s.t.scrub(connectReason(errs[i])))
			continue
		}
		nodes[i].Name = names[i]
		if names[i] == "" || seen[names[i]] > 1 {
			nodes[i].Name = addrOf(h[0])
		}
		out = append(out, nodes[i])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("reading the nodes: none answered (%s)", strings.Join(why, "; "))
	}
	return out, nil
}

// askNode connects to one host, on its own, and reads its cluster_name
// and its postmaster.
func (s *source) askNode(ctx context.Context, h []*pgconn.FallbackConfig) (name string, pid int, err error) {
	cfg := s.t.cfg.Copy()
	cfg.Host, cfg.Port, cfg.TLSConfig = h[0].Host, h[0].Port, h[0].TLSConfig
	cfg.Fallbacks = h[1:]
	cfg.ValidateConnect = nil
	if !s.shared {
		cfg.Database = maintenanceDB
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = telemetryApp
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", 0, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	if err := c.QueryRow(ctx, "SELECT current_setting('cluster_name')").Scan(&name); err != nil {
		return "", 0, err
	}
	pid, _, err = localServer(ctx, c)
	return name, pid, err
}

// hostsOf are the hosts of cfg, each with the ways to reach it in turn
// (with TLS, then without, where sslmode=prefer offers both), in the
// URL's order.
func hostsOf(cfg *pgconn.Config) [][]*pgconn.FallbackConfig {
	all := append([]*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port, TLSConfig: cfg.TLSConfig}}, cfg.Fallbacks...)
	var out [][]*pgconn.FallbackConfig
	for _, f := range all {
		i := slices.IndexFunc(out, func(h []*pgconn.FallbackConfig) bool { return h[0].Host == f.Host && h[0].Port == f.Port })
		if i < 0 {
			out = append(out, nil)
			i = len(out) - 1
		}
		out[i] = append(out[i], f)
	}
	return out
}

// addrOf is where a host is reached: host:port, or a socket's directory
// and port.
func addrOf(f *pgconn.FallbackConfig) string {
	return net.JoinHostPort(f.Host, strconv.Itoa(int(f.Port)))
}
