package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/spf13/pflag"
)

// killFlags are what a run does to its managed server: --kill-server-at
// crashes a server of its own; --failover-at and --switchover-at (the
// runner's parameters, in Options) change a cluster's primary.
type killFlags struct {
	at, pause      time.Duration
	failover, swap *time.Duration
	dir            string
	// nodeAt and node are --kill-node-at and --kill-node: one node of a
	// cluster whose nodes all take writes, lost for good.
	nodeAt time.Duration
	node   string
}

// defaultRestartAfter is about what a service manager waits before it
// starts a crashed server again.
const defaultRestartAfter = 2 * time.Second

// add adds the flags to fs, with those of the runner's parameters that
// act on a cluster, which fs has already, read from o.
func (k *killFlags) add(fs *pflag.FlagSet, o *runner.Options) {
	fs.DurationVar(&k.at, "kill-server-at", 0, "kill the managed server in --server-dir with SIGKILL this long after the run starts (ramp-up included), restart it, and carry on")
	fs.DurationVar(&k.pause, "restart-after", defaultRestartAfter, "with --kill-server-at, how long the server stays down before it is started again")
	fs.DurationVar(&k.nodeAt, "kill-node-at", 0, "kill one node of the managed multi-master cluster in --server-dir with SIGKILL this long after the run starts, and carry on on the others: the virtual users on it move to the next node (dbrig server start --nodes N)")
	fs.StringVar(&k.node, "kill-node", "", "with --kill-node-at, the node to kill, as dbrig server status names it (default: the last node)")
	fs.StringVar(&k.dir, "server-dir", "", "the directory of the managed server or cluster the run's target is on (dbrig server start --dir DIR), for --kill-server-at, --kill-node-at, --failover-at and --switchover-at")
	k.failover, k.swap = &o.FailoverAt, &o.SwitchoverAt
}

// action checks the flags and returns what they do to the server; none
// without them. runs is how long the run lasts, 0 when that is not known
// beforehand; url is the run's target, which must be on the server.
func (k *killFlags) action(ctx context.Context, runs time.Duration, url string) ([]driver.Action, error) {
	if err := k.check(runs); err != nil || k.dir == "" {
		return nil, err
	}
	s, err := server.AttachDir(k.dir)
	if err != nil {
		return nil, err
	}
	st, err := s.Status(ctx)
	if err != nil {
		return nil, err
	}
	if st.State != server.Running {
		return nil, exitcode.Userf("no server running in %s (%s): start it with dbrig server start --dir %s", k.dir, st.State, k.dir)
	}
	if err := server.Serves(k.dir, st, url); err != nil {
		return nil, fmt.Errorf("%s: %w", k.flag(), err)
	}
	c, cluster := s.(server.Cluster)
	switch {
	case k.at > 0 && cluster && c.Topology().Nodes > 0:
		return nil, exitcode.Userf("--kill-server-at crashes a server of its own, and %s holds a cluster of nodes that all take writes: lose one with --kill-node-at", k.dir)
	case k.at > 0 && cluster:
		return nil, exitcode.Userf("--kill-server-at crashes a server of its own, and %s holds a cluster: lose its primary with --failover-at", k.dir)
	case k.at > 0:
		return []driver.Action{k.kill(s, st.Settings)}, nil
	case k.nodeAt > 0:
		return k.killNode(ctx, s)
	}
	return runner.ClusterActions(s, runner.Options{FailoverAt: *k.failover, SwitchoverAt: *k.swap}, k.dir)
}

// check refuses flags that cannot go together, before anything is
// touched; the runner checks its own parameters' values.
func (k *killFlags) check(runs time.Duration) error {
	switch {
	case k.at < 0:
		return exitcode.Userf("--kill-server-at %s: want a moment after the run starts", k.at)
	case k.at > 0 && runs > 0 && k.at >= runs:
		return exitcode.Userf("--kill-server-at %s is past the run's end, %s after it starts", k.at, runs)
	case k.at > 0 && k.dir == "":
		return exitcode.Userf("--kill-server-at needs a managed server: name its directory with --server-dir DIR (dbrig server start --dir DIR)")
	case k.nodeAt < 0:
		return exitcode.Userf("--kill-node-at %s: want a moment after the run starts", k.nodeAt)
	case k.nodeAt > 0 && runs > 0 && k.nodeAt >= runs:
		return exitcode.Userf("--kill-node-at %s is past the run's end, %s after it starts", k.nodeAt, runs)
	case k.nodeAt > 0 && k.dir == "":
		return exitcode.Userf("--kill-node-at needs a managed cluster: name its directory with --server-dir DIR (dbrig server start --nodes N --dir DIR)")
	case k.node != "" && k.nodeAt == 0:
		return exitcode.Userf("--kill-node names the node --kill-node-at kills: give --kill-node-at too")
	case k.nodeAt > 0 && (k.at > 0 || *k.failover > 0 || *k.swap > 0):
		return exitcode.Userf("--kill-node-at loses a node of a cluster whose nodes all take writes: it goes with no other action on the server")
	case (*k.failover > 0 || *k.swap > 0) && k.dir == "":
		return exitcode.Userf("%s needs a managed cluster: name its directory with --server-dir DIR (dbrig server start --replicas N --dir DIR)", k.flag())
	case k.dir != "" && k.at == 0 && k.nodeAt == 0 && *k.failover == 0 && *k.swap == 0:
		return exitcode.Userf("--server-dir is for --kill-server-at, --kill-node-at, --failover-at and --switchover-at: say what to do to the server and when, such as --failover-at 20s")
	case k.pause < 0:
		return exitcode.Userf("--restart-after %s: want a pause of 0 or more", k.pause)
	}
	return nil
}

// flag names the first of the flags that act on the server.
func (k *killFlags) flag() string {
	switch {
	case k.at > 0:
		return "--kill-server-at"
	case k.nodeAt > 0:
		return "--kill-node-at"
	case *k.failover > 0:
		return "--failover-at"
	}
	return "--switchover-at"
}

// kill kills the server s and starts it again with settings.
func (k *killFlags) kill(s server.Server, settings map[string]string) driver.Action {
	return driver.Action{At: k.at, Outage: true, Do: func(ctx context.Context, note func(string)) error {
		pid, err := server.Kill(ctx, s)
		if err != nil {
			return err
		}
		killed := time.Now()
		note(fmt.Sprintf("server killed (SIGKILL to pid %d)", pid))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(k.pause):
		}
		if err := server.Restart(ctx, s, settings); err != nil {
			return fmt.Errorf("restart the server in %s after killing it: %w (it is down: dbrig server start --dir %s)", k.dir, err, k.dir)
		}
		note(fmt.Sprintf("server up again, %.1f s after the kill", time.Since(killed).Seconds()))
		return nil
	}}
}

// killNode is the action of --kill-node-at: the node of s named by
// --kill-node (the last node by default) killed for good, the others
// carrying on.
func (k *killFlags) killNode(ctx context.Context, s server.Server) ([]driver.Action, error) {
	c, ok := s.(server.Cluster)
	killer, kills := s.(server.NodeKiller)
	if !ok || !kills || c.Topology().Nodes == 0 {
		return nil, exitcode.Userf("--kill-node-at loses one node of a cluster whose nodes all take writes, and %s holds none: make one with dbrig server start --kind mariadb --nodes N", k.dir)
	}
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	name := k.node
	if name == "" {
		name = nodes[len(nodes)-1].Name
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
		if n.Name == name && n.Role == server.RoleDown {
			return nil, exitcode.Userf("--kill-node %s: it is down already (%s): start the cluster again with dbrig server start --dir %s", name, n.State, k.dir)
		}
	}
	if !slices.Contains(names, name) {
		return nil, exitcode.Userf("--kill-node %s: the cluster in %s has %s", name, k.dir, strings.Join(names, ", "))
	}
	return []driver.Action{{At: k.nodeAt, Outage: true, Do: func(ctx context.Context, note func(string)) error {
		n, err := killer.KillNode(ctx, name)
		if err != nil {
			return fmt.Errorf("kill node %s: %w", name, err)
		}
		note(fmt.Sprintf("node %s (%s) killed (SIGKILL); the others carry on without it (dbrig server start --dir %s brings it back)", name, n.Addr, k.dir))
		return nil
	}}}, nil
}
