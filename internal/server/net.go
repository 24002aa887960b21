package server

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"
)

// A managed server's nodes can live on a private network of their own: a
// network namespace per node (a space), each joined to a bridge in the
// host's namespace by a veth pair, all on one /24, so that a node is at a
// distance from the others (a standby in another zone) and its link can be
// shaped (a delay now; jitter, loss and partitions are the faults' to add).
// The server layer makes and removes it, knowing no database: a kind
// starts its nodes inside the spaces with Net.In. Linux only
// (net_linux.go); elsewhere MakeNet refuses in one line.

// NetFile is where MakeNet records the network in the server's directory,
// so that another process (dbrig server stop) finds it to remove it, and
// the shaper finds what to shape. It is written before anything is made.
const NetFile = "dbrig-net.json"

// ShaperLog is the shaper's own log, in the server's directory.
const ShaperLog = "net-shaper.log"

// NetSpec is what network a managed server's nodes need.
type NetSpec struct {
	// Spaces is how many namespaces to make, each joined to the bridge by
	// a veth pair. At least 1, at most MaxSpaces.
	Spaces int
	// Delay is per space (by index), added to every IPv4 packet entering
	// it, so that a round trip between a space and the host takes that
	// much longer (and about 0.2 ms more, the shaper's wake-ups), and one
	// between two delayed spaces both delays. A missing or zero entry is
	// no delay.
	Delay []time.Duration
}

// MaxSpaces is as many spaces as the /24 holds beside the host's address
// (and as the interfaces' names have digits for).
const MaxSpaces = 250

// MaxDelay bounds a space's delay: a packet held longer is a partition,
// not a distance, and the kernel's queue would fill.
const MaxDelay = 10 * time.Second

// Net is what MakeNet made for the server in Dir.
type Net struct {
	Dir string `json:"-"`
	// Bridge is in the host's namespace, with address Host.
	Bridge string `json:"bridge"`
	// Host is where processes in the host's namespace listen for the
	// spaces (an etcd, a node left in the host's namespace).
	Host netip.Addr `json:"host"`
	// Prefix is a private /24 that no address or route of the host used
	// when it was chosen.
	Prefix netip.Prefix `json:"prefix"`
	Spaces []Space      `json:"spaces"`
	// ShaperPID is the process that delays the spaces' packets, 0 when no
	// space has a delay.
	ShaperPID int `json:"shaper_pid,omitempty"`
}

// Space is one namespace of a Net.
type Space struct {
	// Name is the namespace's, as `ip netns` names it.
	Name string `json:"name"`
	// Addr is its veth's address; its lo is up too.
	Addr netip.Addr `json:"addr"`
	// HostVeth is the veth pair's end on the bridge, Veth the end inside.
	HostVeth string `json:"host_veth"`
	Veth     string `json:"veth"`
	// Delay is added to every packet that enters the space by Veth.
	Delay time.Duration `json:"delay_ns,omitempty"`
}

func netPath(dir string) string { return filepath.Join(dir, NetFile) }

// LoadNet is what MakeNet recorded in dir, made by this process or
// another; an error wrapping os.ErrNotExist when there is none.
func LoadNet(dir string) (*Net, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(netPath(abs))
	if err != nil {
		return nil, err
	}
	n := &Net{Dir: abs}
	if err := json.Unmarshal(b, n); err != nil {
		return nil, fmt.Errorf("%s: %w", netPath(abs), err)
	}
	return n, nil
}
