package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/dbrig/dbrig/internal/driver"
	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/spf13/pflag"
)

// killFlags are what a run does to its managed server: --kill-server-at
// crashes a server of its own, --failover-at and --switchover-at change a
// cluster's primary.
type killFlags struct {
	at, pause      time.Duration
	failover, swap time.Duration
	dir            string
}

// defaultRestartAfter is about what a service manager waits before it
// starts a crashed server again.
const defaultRestartAfter = 2 * time.Second

func (k *killFlags) add(fs *pflag.FlagSet) {
	fs.DurationVar(&k.at, "kill-server-at", 0, "kill the managed server in --server-dir with SIGKILL this long after the run starts (ramp-up included), restart it, and carry on")
	fs.DurationVar(&k.pause, "restart-after", defaultRestartAfter, "with --kill-server-at, how long the server stays down before it is started again")
	fs.DurationVar(&k.failover, "failover-at", 0, "lose the primary of the cluster in --server-dir this long after the run starts, as a lost machine would (its postmaster and HA manager killed), and carry on on the node promoted")
	fs.DurationVar(&k.swap, "switchover-at", 0, "hand the primary's role of the cluster in --server-dir to another node, planned, this long after the run starts")
	fs.StringVar(&k.dir, "server-dir", "", "the directory of the managed server or cluster the run's target is on (dbrig server start --dir DIR), for --kill-server-at, --failover-at and --switchover-at")
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
	case k.at > 0 && cluster:
		return nil, exitcode.Userf("--kill-server-at crashes a server of its own, and %s holds a cluster: lose its primary with --failover-at", k.dir)
	case (k.failover > 0 || k.swap > 0) && !cluster:
		return nil, exitcode.Userf("--failover-at and --switchover-at need a cluster, and %s holds a server of its own: make one with dbrig server start --replicas N --dir DIR", k.dir)
	case k.at > 0:
		return []driver.Action{k.kill(s, st.Settings)}, nil
	}
	var actions []driver.Action
	if k.failover > 0 {
		actions = append(actions, handOver(k.failover, "failover", c.Failover))
	}
	if k.swap > 0 {
		actions = append(actions, handOver(k.swap, "switchover", c.Switchover))
	}
	return actions, nil
}

// check refuses flags that cannot go together, before anything is
// touched.
func (k *killFlags) check(runs time.Duration) error {
	any := false
	for _, a := range []struct {
		flag, start string
		at          time.Duration
	}{
		{"--kill-server-at", "dbrig server start --dir DIR", k.at},
		{"--failover-at", "a cluster: dbrig server start --replicas N --dir DIR", k.failover},
		{"--switchover-at", "a cluster: dbrig server start --replicas N --dir DIR", k.swap},
	} {
		switch {
		case a.at < 0:
			return exitcode.Userf("%s %s: want a moment after the run starts", a.flag, a.at)
		case a.at > 0 && runs > 0 && a.at >= runs:
			return exitcode.Userf("%s %s is past the run's end, %s after it starts", a.flag, a.at, runs)
		case a.at > 0 && k.dir == "":
			return exitcode.Userf("%s needs a managed server: name its directory with --server-dir DIR (%s)", a.flag, a.start)
		}
		any = any || a.at > 0
	}
	switch {
	case k.dir != "" && !any:
		return exitcode.Userf("--server-dir is for --kill-server-at, --failover-at and --switchover-at: say what to do to the server and when, such as --failover-at 20s")
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
	case k.failover > 0:
		return "--failover-at"
	}
	return "--switchover-at"
}

// kill kills the server s and starts it again with settings.
func (k *killFlags) kill(s server.Server, settings map[string]string) driver.Action {
	return driver.Action{At: k.at, Do: func(ctx context.Context, note func(string)) error {
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

// handOver is the action that changes a cluster's primary with change
// at at, and names the node that is primary after it.
func handOver(at time.Duration, what string, change func(context.Context, func(string)) (server.Node, error)) driver.Action {
	return driver.Action{At: at, Do: func(ctx context.Context, note func(string)) error {
		began := time.Now()
		n, err := change(ctx, note)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		note(fmt.Sprintf("new primary: %s at %s (timeline %d), %.1f s after the %s began", n.Name, n.Addr, n.Timeline, time.Since(began).Seconds(), what))
		return nil
	}}
}
