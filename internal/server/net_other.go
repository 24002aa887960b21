//go:build !linux

package server

import "github.com/dbrig/dbrig/internal/exitcode"

var errNoNet = exitcode.Userf("a private network for a server's nodes needs Linux: network namespaces, veth pairs and netfilter queues")

// NetSupported refuses: only Linux has network namespaces.
func NetSupported() error { return errNoNet }

// MakeNet refuses: only Linux has network namespaces.
func MakeNet(dir string, spec NetSpec) (*Net, error) { return nil, errNoNet }

// Remove refuses: no network could have been made here.
func (n *Net) Remove() error { return errNoNet }

// In refuses: only Linux has network namespaces.
func (n *Net) In(i int, fn func() error) error { return errNoNet }
