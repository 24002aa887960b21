//go:build unix

package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Daemon is a process that dbrig started to outlive the command that
// started it (an HA manager, the store it keeps its state in), as a
// cluster's state records it so that another process can find and stop
// it.
type Daemon struct {
	PID int `json:"pid"`
	// Born is its start time (clock ticks since boot), which tells it
	// from a later process that was given its PID.
	Born uint64 `json:"born"`
	Log  string `json:"log"`
}

// StartDaemon starts cmd in a session of its own, its output appended to
// log, so that it outlives this process, the context it was made with and
// any terminal's Ctrl-C; in starts it where it must run (a network namespace: see Net.In),
// nil here. This process reaps it if it ends first.
func StartDaemon(cmd *exec.Cmd, log string, in func(func() error) error) (Daemon, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Daemon{}, err
	}
	defer f.Close()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cred := cmd.SysProcAttr.Credential; cred != nil {
		if err := Own(log, cred); err != nil {
			return Daemon{}, err
		}
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr.Setsid = true
	// A command made with a context would be killed as it ends (and
	// WaitDelay after): a daemon's end is Stop's business.
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return nil }
	}
	cmd.WaitDelay = 0
	start := cmd.Start
	if in != nil {
		start = func() error { return in(cmd.Start) }
	}
	if err := start(); err != nil {
		return Daemon{}, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	d := Daemon{PID: cmd.Process.Pid, Log: log}
	d.Born, _ = bornAt(d.PID)
	go cmd.Wait()
	return d, nil
}

func bornAt(pid int) (uint64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return st.Starttime, nil
}

// Alive says the daemon runs: its PID is the process it was, and not a
// zombie waiting to be reaped.
func (d Daemon) Alive() bool {
	if d.PID <= 0 {
		return false
	}
	born, err := bornAt(d.PID)
	return err == nil && (d.Born == 0 || born == d.Born) && !IsZombie(d.PID)
}

// Kill ends the daemon at once, as a lost machine would end it.
func (d Daemon) Kill() error { return d.signal(syscall.SIGKILL) }

func (d Daemon) signal(sig syscall.Signal) error {
	if !d.Alive() {
		return nil
	}
	if err := syscall.Kill(d.PID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to pid %d: %w", sig, d.PID, err)
	}
	return nil
}

// Stop asks the daemon to end (SIGTERM) and waits for it, up to grace,
// then kills it.
func (d Daemon) Stop(ctx context.Context, grace time.Duration) error {
	if err := d.signal(syscall.SIGTERM); err != nil {
		return err
	}
	if d.wait(ctx, grace) {
		return nil
	}
	if err := d.Kill(); err != nil {
		return err
	}
	if !d.wait(ctx, 10*time.Second) {
		return fmt.Errorf("pid %d did not end after SIGKILL", d.PID)
	}
	return nil
}

// wait waits up to limit for the daemon to be gone, and says whether it is.
func (d Daemon) wait(ctx context.Context, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for d.Alive() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
