//go:build unix

package server

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// RestartLimit bounds how long Restart keeps trying: a crashed
// PostgreSQL's backends hold its shared memory until each notices that the
// postmaster is gone, and a new postmaster refuses to start until then.
const RestartLimit = 60 * time.Second

// Kill ends the running server s as a crash would: SIGKILL to its main
// process (PostgreSQL's postmaster, mariadbd), with no chance to write
// anything, and waits for that process to be gone. It returns the pid.
func Kill(ctx context.Context, s Server) (int, error) {
	st, err := s.Status(ctx)
	if err != nil {
		return 0, err
	}
	if st.State != Running || st.PID <= 0 {
		return 0, fmt.Errorf("no server running to kill (%s)", st.State)
	}
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill the server (pid %d): %w", st.PID, err)
	}
	return st.PID, awaitExit(ctx, st.PID)
}

// awaitExit waits until the process pid is gone, or a zombie.
func awaitExit(ctx context.Context, pid int) error {
	for syscall.Kill(pid, 0) == nil && !IsZombie(pid) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Restart starts s again after Kill, with settings, as a service manager
// would: the crash is acknowledged, and the start is retried until it
// succeeds or RestartLimit has passed, since what the dead server's
// processes still hold keeps a new one from starting for a while.
func Restart(ctx context.Context, s Server, settings map[string]string) error {
	if err := s.Stop(ctx); err != nil && !errors.Is(err, ErrCrashed) {
		return err
	}
	deadline := time.Now().Add(RestartLimit)
	for {
		err := s.Start(ctx, settings)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
