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

// killFlags crash the managed server under a run: --kill-server-at.
type killFlags struct {
	at, pause time.Duration
	dir       string
}

// defaultRestartAfter is about what a service manager waits before it
// starts a crashed server again.
const defaultRestartAfter = 2 * time.Second

func (k *killFlags) add(fs *pflag.FlagSet) {
	fs.DurationVar(&k.at, "kill-server-at", 0, "kill the managed server in --server-dir with SIGKILL this long after the run starts (ramp-up included), restart it, and carry on")
	fs.DurationVar(&k.pause, "restart-after", defaultRestartAfter, "with --kill-server-at, how long the server stays down before it is started again")
	fs.StringVar(&k.dir, "server-dir", "", "the directory of the managed server the run's target is on (dbrig server start --dir DIR), for --kill-server-at")
}

// action checks the flags and returns what kills and restarts the
// server; none without --kill-server-at. runs is how long the run lasts,
// 0 when that is not known beforehand; url is the run's target, which
// must be on the server.
func (k *killFlags) action(ctx context.Context, runs time.Duration, url string) ([]driver.Action, error) {
	switch {
	case k.at == 0 && k.dir == "":
		return nil, nil
	case k.at <= 0:
		return nil, exitcode.Userf("--server-dir is for --kill-server-at: say when to kill the server, such as --kill-server-at 15s")
	case k.dir == "":
		return nil, exitcode.Userf("--kill-server-at needs a managed server: name its directory with --server-dir DIR (dbrig server start --dir DIR)")
	case k.pause < 0:
		return nil, exitcode.Userf("--restart-after %s: want a pause of 0 or more", k.pause)
	case runs > 0 && k.at >= runs:
		return nil, exitcode.Userf("--kill-server-at %s is past the run's end, %s after it starts", k.at, runs)
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
		return nil, fmt.Errorf("--kill-server-at: %w", err)
	}
	settings := st.Settings
	return []driver.Action{{At: k.at, Do: func(ctx context.Context, note func(string)) error {
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
	}}}, nil
}
