package cli

import (
	"context"
	"fmt"
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
}

// defaultRestartAfter is about what a service manager waits before it
// starts a crashed server again.
const defaultRestartAfter = 2 * time.Second

// add adds the flags to fs, with those of the runner's parameters that
// act on a cluster, which fs has already, read from o.
func (k *killFlags) add(fs *pflag.FlagSet, o *runner.Options) {
	fs.DurationVar(&k.at, "kill-server-at", 0, "kill the managed server in --server-dir with SIGKILL this long after the run starts (ramp-up included), restart it, and carry on")
	fs.DurationVar(&k.pause, "restart-after", defaultRestartAfter, "with --kill-server-at, how long the server stays down before it is started again")
	fs.StringVar(&k.dir, "server-dir", "", "the directory of the managed server or cluster the run's target is on (dbrig server start --dir DIR), for --kill-server-at, --failover-at and --switchover-at")
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
	if _, cluster := s.(server.Cluster); k.at > 0 && cluster {
		return nil, exitcode.Userf("--kill-server-at crashes a server of its own, and %s holds a cluster: lose its primary with --failover-at", k.dir)
	} else if k.at > 0 {
		return []driver.Action{k.kill(s, st.Settings)}, nil
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
	case (*k.failover > 0 || *k.swap > 0) && k.dir == "":
		return exitcode.Userf("%s needs a managed cluster: name its directory with --server-dir DIR (dbrig server start --replicas N --dir DIR)", k.flag())
	case k.dir != "" && k.at == 0 && *k.failover == 0 && *k.swap == 0:
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
