//go:build linux

package server

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/vishvananda/netlink"
)

// NetSupported is nil where MakeNet can work, or one line saying why not,
// for a command to refuse its flag before anything starts.
func NetSupported() error {
	if os.Geteuid() != 0 {
		return exitcode.Userf("a private network for a server's nodes needs root: only root makes network namespaces, veth pairs and bridges")
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return exitcode.Userf("this kernel has no network namespaces (no /proc/self/ns/net), which a private network for a server's nodes needs")
	}
	_, err := iptables()
	return err
}

// iptables is the iptables program: on PATH, or where Debian puts it,
// which a user's PATH may lack.
func iptables() (string, error) {
	if path, err := exec.LookPath("iptables"); err == nil {
		return path, nil
	}
	const debian = "/usr/sbin/iptables"
	if _, err := os.Stat(debian); err == nil {
		return debian, nil
	}
	return "", exitcode.Userf("no iptables on PATH or in /usr/sbin, which shapes the links of a server's nodes: install Debian's iptables package")
}

// MakeNet makes the network spec asks for, for the server in dir, and
// records it in dir's NetFile; a network that a crash left there is
// removed first (so a Net still in use must not be made again). A failure
// half-way removes what was made. When it returns, every delay is in force.
//
// Its names come from dir's absolute path (a hash of it), so that two
// servers never collide, and its /24 is chosen under a lock that every
// dbrig on the host takes, among the private ranges, overlapping no
// address or route the host has. Nothing reaches past it: no default
// route, no forwarding, no NAT. The host's own firewall is left alone, so
// a host whose INPUT (or, with br_netfilter, FORWARD) policy drops what it
// does not know must let the /24 through itself.
func MakeNet(dir string, spec NetSpec) (*Net, error) {
	if err := NetSupported(); err != nil {
		return nil, err
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	switch old, err := LoadNet(abs); {
	case err == nil:
		if err := old.Remove(); err != nil {
			return nil, fmt.Errorf("the network left in %s: %w", abs, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	n := planNet(abs, spec)
	if err := n.make(); err != nil {
		err = fmt.Errorf("making the network of %s: %w", abs, err)
		if rerr := n.Remove(); rerr != nil {
			return nil, fmt.Errorf("%w; then %w", err, rerr)
		}
		return nil, err
	}
	return n, nil
}

// check refuses a spec that MakeNet cannot make, in one line.
func (s NetSpec) check() error {
	if s.Spaces < 1 || s.Spaces > MaxSpaces {
		return exitcode.Userf("a network of %d spaces: it takes 1 to %d", s.Spaces, MaxSpaces)
	}
	if len(s.Delay) > s.Spaces {
		return exitcode.Userf("%d delays for %d spaces", len(s.Delay), s.Spaces)
	}
	for i, d := range s.Delay {
		if d < 0 || d > MaxDelay {
			return exitcode.Userf("space %d's delay %v: it takes 0 to %v", i, d, MaxDelay)
		}
	}
	return nil
}

// dirID is what a network's names are made of: 8 hex digits of a hash of
// the server's absolute directory, which leave room in Linux's 15
// characters of an interface's name for "dbr", a letter and 3 digits.
func dirID(abs string) (string, [32]byte) {
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:4]), sum
}

// planNet names what MakeNet makes for spec in abs; the addresses wait
// for the /24.
func planNet(abs string, spec NetSpec) *Net {
	id, _ := dirID(abs)
	n := &Net{Dir: abs, Bridge: "dbr" + id}
	for i := range spec.Spaces {
		s := Space{
			Name:     fmt.Sprintf("dbrig-%s-%d", id, i),
			HostVeth: fmt.Sprintf("dbr%sh%d", id, i),
			Veth:     fmt.Sprintf("dbr%ss%d", id, i),
		}
		if i < len(spec.Delay) {
			s.Delay = spec.Delay[i]
		}
		n.Spaces = append(n.Spaces, s)
	}
	return n
}

// subnetStart is where a server's search for a free /24 begins, so that
// servers made at once mostly start apart.
func subnetStart(abs string) uint32 {
	_, sum := dirID(abs)
	return binary.BigEndian.Uint32(sum[4:])
}

// make makes n, recording it first and at each step, so that a Remove
// after a crash anywhere finds all that was made.
func (n *Net) make() error {
	if err := n.save(); err != nil {
		return err
	}
	if err := n.makeBridge(subnetStart(n.Dir)); err != nil {
		return err
	}
	if err := n.save(); err != nil {
		return err
	}
	for i := range n.Spaces {
		if err := n.makeSpace(i); err != nil {
			return err
		}
	}
	if !n.delayed() {
		return nil
	}
	if err := n.startShaper(); err != nil {
		return err
	}
	return n.queueDelayed()
}

func (n *Net) save() error { return WriteJSON(netPath(n.Dir), n) }

func (n *Net) delayed() bool {
	for _, s := range n.Spaces {
		if s.Delay > 0 {
			return true
		}
	}
	return false
}

// queueDelayed adds, in each delayed space, the rule that hands what
// arrives by its veth to the shaper. It has no --queue-bypass: were the
// shaper gone, the kernel would drop what the rule queues, and the link
// would stop, loudly, rather than go on without its delay.
//
// The packets are held as they arrive, not as they leave: a packet held
// on its way out still counts against its socket's small queue (TCP
// sends no more than about a millisecond of its pacing ahead), so a
// sender in a delayed space moved 1.1 MB/s to another 5 ms away, where
// one held on its way in, across the veth and orphaned from its socket,
// moves 120 MB/s; each way adds the same to a round trip.
func (n *Net) queueDelayed() error {
	prog, err := iptables()
	if err != nil {
		return err
	}
	for i, s := range n.Spaces {
		if s.Delay == 0 {
			continue
		}
		if err := n.In(i, func() error {
			out, err := exec.Command(prog, "-w", "-A", "INPUT", "-i", s.Veth,
				"-j", "NFQUEUE", "--queue-num", strconv.Itoa(shaperQueue)).CombinedOutput()
			if err != nil {
				return fmt.Errorf("iptables in %s: %w: %s", s.Name, err, strings.TrimSpace(string(out)))
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// Remove removes all that MakeNet made for n: the shaper stopped, then the
// veth pairs, the namespaces and the bridge, then the record. It works
// from any process and after a crash of the one that made n, and again
// after it has worked, doing nothing. Processes still in a space (the
// nodes: stop them first) keep its namespace, without its veth, until
// they end.
func (n *Net) Remove() error {
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	keep(n.stopShaper())
	for _, s := range n.Spaces {
		keep(deleteLink(s.HostVeth)) // its peer, in the space, goes with it
		keep(removeNamespace(s.Name))
	}
	keep(deleteLink(n.Bridge))
	if first == nil {
		if err := os.Remove(netPath(n.Dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
			first = err
		}
	}
	if first != nil {
		return fmt.Errorf("removing the network of %s: %w", n.Dir, first)
	}
	return nil
}

// deleteLink deletes the link name in the host's namespace, if it is there.
func deleteLink(name string) error {
	l, err := netlink.LinkByName(name)
	if errors.As(err, &netlink.LinkNotFoundError{}) {
		return nil
	}
	if err == nil {
		err = netlink.LinkDel(l)
	}
	if err != nil {
		return fmt.Errorf("deleting link %s: %w", name, err)
	}
	return nil
}
