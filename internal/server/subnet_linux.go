//go:build linux

package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// privateNets are RFC 1918's ranges, where a network's /24 is chosen.
var privateNets = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
}

// netLock is the lock every dbrig on the host takes to choose a /24 and
// put it on its bridge, so that two servers made at once never choose
// the same one. /run is cleared at boot, as the bridges are.
const netLock = "/run/dbrig/net.lock"

// makeBridge chooses n's /24, the first free one from the start-th on,
// makes its bridge with the host's address (the first), up, and gives the
// spaces the addresses after it.
func (n *Net) makeBridge(start uint32) error {
	if err := os.MkdirAll(filepath.Dir(netLock), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(netLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close() // and so unlocked
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", netLock, err)
	}
	used, err := hostPrefixes()
	if err != nil {
		return err
	}
	p, err := choosePrefix(start, used)
	if err != nil {
		return err
	}
	n.Prefix, n.Host = p, p.Addr().Next()
	a := n.Host
	for i := range n.Spaces {
		a = a.Next()
		n.Spaces[i].Addr = a
	}
	if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: n.Bridge}}); err != nil {
		return fmt.Errorf("adding bridge %s: %w", n.Bridge, err)
	}
	br, err := netlink.LinkByName(n.Bridge)
	if err != nil {
		return err
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: n.Host.AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}}
	if err := netlink.AddrAdd(br, addr); err != nil {
		return fmt.Errorf("address %s on %s: %w", n.Host, n.Bridge, err)
	}
	return setUp(nil, n.Bridge)
}

// hostPrefixes are the IPv4 prefixes of the host namespace's addresses and
// of its routes in every table, but the default routes.
func hostPrefixes() ([]netip.Prefix, error) {
	addrs, err := dump(func() ([]netlink.Addr, error) { return netlink.AddrList(nil, netlink.FAMILY_V4) })
	if err != nil {
		return nil, fmt.Errorf("listing the host's addresses: %w", err)
	}
	routes, err := dump(func() ([]netlink.Route, error) {
		return netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		return nil, fmt.Errorf("listing the host's routes: %w", err)
	}
	var used []netip.Prefix
	for _, a := range addrs {
		used = appendPrefix(used, a.IPNet)
	}
	for _, r := range routes {
		used = appendPrefix(used, r.Dst)
	}
	return used, nil
}

// dump retries a netlink dump that changes under it (another process
// adding a link, say), which the kernel then marks as interrupted.
func dump[T any](list func() ([]T, error)) ([]T, error) {
	for range 4 {
		if v, err := list(); !errors.Is(err, netlink.ErrDumpInterrupted) {
			return v, err
		}
	}
	return list()
}

func appendPrefix(to []netip.Prefix, ipnet *net.IPNet) []netip.Prefix {
	if ipnet == nil {
		return to
	}
	a, ok := netip.AddrFromSlice(ipnet.IP)
	bits, _ := ipnet.Mask.Size()
	if !ok || bits == 0 { // a default route is no subnet
		return to
	}
	return append(to, netip.PrefixFrom(a.Unmap(), bits).Masked())
}

// choosePrefix is the first /24 of the private ranges, counting on from
// the start-th (wrapping), that overlaps none of used.
func choosePrefix(start uint32, used []netip.Prefix) (netip.Prefix, error) {
	total := uint32(0)
	for _, r := range privateNets {
		total += 1 << (24 - r.Bits())
	}
	for k := range total {
		p := nthSlash24((start + k) % total)
		free := true
		for _, u := range used {
			if u.Overlaps(p) {
				free = false
				break
			}
		}
		if free {
			return p, nil
		}
	}
	return netip.Prefix{}, errors.New("every private /24 overlaps an address or a route of this host")
}

// nthSlash24 is the i-th /24 of privateNets, in their order.
func nthSlash24(i uint32) netip.Prefix {
	for _, r := range privateNets {
		size := uint32(1) << (24 - r.Bits())
		if i < size {
			b := r.Addr().As4()
			binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(b[:])+i<<8)
			return netip.PrefixFrom(netip.AddrFrom4(b), 24)
		}
		i -= size
	}
	panic("nthSlash24: past the private ranges")
}
