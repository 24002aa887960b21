//go:build unix

package postgres

import (
	"bytes"
	"os/exec"

	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/target"
)

// Confine sets the confinement of the starts that follow. pg_ctl is then
// started inside the server's cgroup, so the postmaster and every process
// it forks are born there.
func (s *Server) Confine(c server.Confinement) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return target.Userf("the server in %s is running: stop it before changing what it is confined to", s.Dir)
	}
	if !c.IsZero() {
		if err := server.NewCgroup(s.Dir, c).Check(); err != nil {
			return err
		}
	}
	s.setConfinement(c)
	return nil
}

func (s *Server) setConfinement(c server.Confinement) {
	s.confined, s.cgroup = c, nil
	if !c.IsZero() {
		s.cgroup = server.NewCgroup(s.Dir, c)
	}
}

// removeCgroup removes the cgroup of a stopped server, if it had one.
func (s *Server) removeCgroup() error {
	if s.cgroup == nil {
		return nil
	}
	return s.cgroup.Remove()
}

// combinedOutput is cmd.CombinedOutput, inside the cgroup when confined.
func (s *Server) combinedOutput(cmd *exec.Cmd) ([]byte, error) {
	if s.cgroup == nil {
		return cmd.CombinedOutput()
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.cgroup.Start(cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	return out.Bytes(), err
}
