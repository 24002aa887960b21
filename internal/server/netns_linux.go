//go:build linux

package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netnsDir is where iproute2 keeps named namespaces (and vishvananda/netns
// makes them), so that `ip netns` lists dbrig's.
const netnsDir = "/run/netns"

// In runs fn on an OS thread inside space i's namespace: a process that
// fn starts (exec.Cmd's Start, Run, CombinedOutput) and a socket it opens
// live there, while goroutines fn starts do not. The thread is never
// reused: it ends with fn.
func (n *Net) In(i int, fn func() error) error {
	if i < 0 || i >= len(n.Spaces) {
		return fmt.Errorf("no space %d in the network of %s, which has %d", i, n.Dir, len(n.Spaces))
	}
	name := n.Spaces[i].Name
	return onOwnThread(func() error {
		ns, err := netns.GetFromName(name)
		if err != nil {
			return fmt.Errorf("namespace %s: %w", name, err)
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("entering namespace %s: %w", name, err)
		}
		return fn()
	})
}

// onOwnThread runs fn on an OS thread of its own, which fn may move into
// another namespace: a goroutine that ends locked to its thread takes the
// thread with it, so no other goroutine ever runs there. But for the
// process's main thread, which Go parks for good rather than ends: that
// one would stay in the namespace (TestNetIn saw it once in CI), so the
// thread is moved back into the namespace it started in first. A panic
// in fn comes back as the error.
func onOwnThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		defer exitcode.Recover(func(err error) { errc <- err })
		runtime.LockOSThread()
		home, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("reading this thread's network namespace: %w", err)
			return
		}
		defer home.Close()
		defer func() { _ = netns.Set(home) }()
		errc <- fn()
	}()
	return <-errc
}

// makeSpace makes space i's namespace and its veth pair, the host's end on
// the bridge and the other in the space with the space's address, both up,
// and the space's lo up.
func (n *Net) makeSpace(i int) error {
	s := n.Spaces[i]
	var ns netns.NsHandle
	if err := onOwnThread(func() (err error) {
		ns, err = netns.NewNamed(s.Name)
		return err
	}); err != nil {
		return fmt.Errorf("making namespace %s: %w", s.Name, err)
	}
	defer ns.Close()
	br, err := netlink.LinkByName(n.Bridge)
	if err != nil {
		return err
	}
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: s.HostVeth, MasterIndex: br.Attrs().Index},
		PeerName:      s.Veth,
		PeerNamespace: netlink.NsFd(ns),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("adding veth pair %s: %w", s.HostVeth, err)
	}
	if err := setUp(nil, s.HostVeth); err != nil {
		return err
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", s.Name, err)
	}
	defer h.Close()
	if err := setUp(h, "lo"); err != nil {
		return err
	}
	l, err := h.LinkByName(s.Veth)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", s.Veth, s.Name, err)
	}
	mask := net.CIDRMask(n.Prefix.Bits(), 32)
	if err := h.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: s.Addr.AsSlice(), Mask: mask}}); err != nil {
		return fmt.Errorf("address %s on %s in %s: %w", s.Addr, s.Veth, s.Name, err)
	}
	return setUp(h, s.Veth)
}

// setUp brings the link name up, through h (nil: the host's namespace).
func setUp(h *netlink.Handle, name string) error {
	if h == nil {
		h = &netlink.Handle{}
	}
	l, err := h.LinkByName(name)
	if err == nil {
		err = h.LinkSetUp(l)
	}
	if err != nil {
		return fmt.Errorf("bringing %s up: %w", name, err)
	}
	return nil
}

// removeNamespace removes the named namespace, if it is there; the kernel
// frees it once no process is in it and no socket holds it.
func removeNamespace(name string) error {
	path := filepath.Join(netnsDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL && err != unix.ENOENT {
		return fmt.Errorf("unmounting %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
