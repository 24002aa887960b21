//go:build unix

package postgres

import (
	"github.com/dbrig/dbrig/internal/server"
)

// Confine sets the confinement of the starts that follow. pg_ctl is then
// started inside the server's cgroup, so the postmaster and every process
// it forks are born there.
func (s *Server) Confine(c server.Confinement) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confined.Confine(s.Dir, s.live.Running(), c)
}
