//go:build !linux

package server

import (
	"os/exec"

	"github.com/dbrig/dbrig/internal/exitcode"
)

// Cgroup stands in for Linux's cgroups, which no other OS has: every
// confinement is refused at Check, before anything runs.
type Cgroup struct{}

// NewCgroup is the cgroup of the server in serverDir.
func NewCgroup(serverDir string, c Confinement) *Cgroup { return &Cgroup{} }

var errNoCgroups = exitcode.Userf("confining a server to a memory size and CPUs needs Linux cgroups")

// Check refuses: there are no cgroups here.
func (g *Cgroup) Check() error { return errNoCgroups }

// Create refuses: there are no cgroups here.
func (g *Cgroup) Create() error { return errNoCgroups }

// Start refuses: there are no cgroups here.
func (g *Cgroup) Start(cmd *exec.Cmd) error { return errNoCgroups }

// Remove has nothing to remove.
func (g *Cgroup) Remove() error { return nil }

// Dir is "": nothing is confined.
func (g *Cgroup) Dir(controller string) string { return "" }
