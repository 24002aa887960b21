//go:build linux

package server

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func TestNetNames(t *testing.T) {
	a := planNet("/srv/pg", NetSpec{Spaces: MaxSpaces})
	b := planNet("/srv/pg2", NetSpec{Spaces: 1})
	if a.Bridge == b.Bridge || a.Spaces[0].Name == b.Spaces[0].Name || a.Spaces[0].HostVeth == b.Spaces[0].HostVeth {
		t.Errorf("two directories share names: %+v and %+v", a, b)
	}
	if again := planNet("/srv/pg", NetSpec{Spaces: 1}); again.Bridge != a.Bridge || again.Spaces[0] != a.Spaces[0] {
		t.Errorf("the same directory named its network %+v, then %+v", a.Spaces[0], again.Spaces[0])
	}
	seen := map[string]bool{a.Bridge: true}
	for _, s := range a.Spaces {
		for _, name := range []string{s.HostVeth, s.Veth} {
			if len(name) > unix.IFNAMSIZ-1 {
				t.Errorf("interface name %s is longer than Linux's %d characters", name, unix.IFNAMSIZ-1)
			}
			if seen[name] {
				t.Errorf("interface name %s twice", name)
			}
			seen[name] = true
		}
	}
}

func TestNetSpecCheck(t *testing.T) {
	for _, s := range []NetSpec{
		{Spaces: 0},
		{Spaces: MaxSpaces + 1},
		{Spaces: 1, Delay: []time.Duration{1, 2}},
		{Spaces: 2, Delay: []time.Duration{0, -time.Millisecond}},
		{Spaces: 1, Delay: []time.Duration{MaxDelay + 1}},
	} {
		if err := s.check(); err == nil {
			t.Errorf("%+v passed", s)
		}
	}
	if err := (NetSpec{Spaces: 3, Delay: []time.Duration{time.Millisecond}}).check(); err != nil {
		t.Error(err)
	}
}

// needNetns skips a test that needs to make networks, where this host
// cannot (not root), unless DBRIG_REQUIRE_NETNS=1 (CI runs as root).
func needNetns(t *testing.T) {
	t.Helper()
	if err := NetSupported(); err != nil {
		if os.Getenv("DBRIG_REQUIRE_NETNS") == "1" {
			t.Fatalf("DBRIG_REQUIRE_NETNS=1 but %v", err)
		}
		t.Skipf("%v (set DBRIG_REQUIRE_NETNS=1 to fail instead)", err)
	}
}

// makeNet makes a network for a new directory, removed when the test ends,
// where it checks that nothing of it is left.
func makeNet(t *testing.T, spec NetSpec) *Net {
	t.Helper()
	n, err := MakeNet(t.TempDir(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removed(t, n) })
	return n
}

// removed removes n, and checks that nothing of it is left.
func removed(t *testing.T, n *Net) {
	t.Helper()
	if err := n.Remove(); err != nil {
		t.Fatal(err)
	}
	gone(t, n)
}

// gone checks that nothing of n is left, and that a Remove then does
// nothing.
func gone(t *testing.T, n *Net) {
	t.Helper()
	for _, s := range n.Spaces {
		if _, err := os.Lstat(filepath.Join(netnsDir, s.Name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("namespace %s left: %v", s.Name, err)
		}
	}
	for _, name := range linkNames(n) {
		if _, err := netlink.LinkByName(name); err == nil {
			t.Errorf("link %s left", name)
		}
	}
	if pids := shapersOf(t, n.Dir); len(pids) > 0 {
		t.Errorf("shaper left running: %v", pids)
	}
	if _, err := LoadNet(n.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the record left: %v", err)
	}
	if err := n.Remove(); err != nil {
		t.Errorf("a Remove of what is gone: %v", err)
	}
}

func linkNames(n *Net) []string {
	names := []string{n.Bridge}
	for _, s := range n.Spaces {
		names = append(names, s.HostVeth)
	}
	return names
}

// shapersOf are the live processes that shape the network of dir.
func shapersOf(t *testing.T, dir string) []int {
	t.Helper()
	procs, err := procfs.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range procs {
		if isShaper(p.PID, dir) && !IsZombie(p.PID) {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

func TestNetTwoAtOnce(t *testing.T) {
	needNetns(t)
	t.Parallel()
	nets := make([]*Net, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range nets {
		dir := t.TempDir()
		wg.Go(func() { nets[i], errs[i] = MakeNet(dir, NetSpec{Spaces: 2}) })
	}
	wg.Wait()
	for _, n := range nets {
		if n != nil {
			t.Cleanup(func() { removed(t, n) })
		}
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	a, b := nets[0], nets[1]
	if a.Prefix.Overlaps(b.Prefix) {
		t.Errorf("two networks made at once on %v and %v", a.Prefix, b.Prefix)
	}
	// Their directories' hashes start them apart; from the same start,
	// the host-wide lock keeps them apart.
	bridges := []*Net{planNet(t.TempDir(), NetSpec{Spaces: 1}), planNet(t.TempDir(), NetSpec{Spaces: 1})}
	for i, n := range bridges {
		wg.Go(func() { errs[i] = n.makeBridge(subnetStart(a.Dir)) })
	}
	wg.Wait()
	for i, n := range bridges {
		t.Cleanup(func() { removed(t, n) })
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
	}
	if p, q := bridges[0].Prefix, bridges[1].Prefix; p.Overlaps(q) || p.Overlaps(a.Prefix) {
		t.Errorf("bridges made at once from %v's start are on %v and %v", a.Prefix, p, q)
	}
	for _, name := range linkNames(a) {
		if slices.Contains(linkNames(b), name) {
			t.Errorf("two networks made at once both have %s", name)
		}
	}
	if a.Spaces[0].Name == b.Spaces[0].Name {
		t.Errorf("two networks made at once both have namespace %s", a.Spaces[0].Name)
	}
	if a.ShaperPID != 0 {
		t.Errorf("a network without delays has a shaper, pid %d", a.ShaperPID)
	}
}

// echo serves, in space i of n, a TCP echo at the space's address, for as
// long as the test runs.
func echo(t *testing.T, n *Net, i int) string {
	t.Helper()
	var l net.Listener
	if err := n.In(i, func() (err error) {
		l, err = net.Listen("tcp", netip.AddrPortFrom(n.Spaces[i].Addr, 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return l.Addr().String()
}

// medianRTT is the median of 20 one-byte round trips to the echo at addr.
func medianRTT(t *testing.T, addr string) time.Duration {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	rtts := make([]time.Duration, 20)
	b := []byte{1}
	for i := range rtts {
		start := time.Now()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		rtts[i] = time.Since(start)
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2]
}

func TestNetIn(t *testing.T) {
	needNetns(t)
	t.Parallel()
	n := makeNet(t, NetSpec{Spaces: 2})
	if !n.Prefix.Contains(n.Host) || !n.Prefix.Contains(n.Spaces[1].Addr) {
		t.Errorf("addresses %v and %v outside %v", n.Host, n.Spaces[1].Addr, n.Prefix)
	}
	// From the host, to a space; and from one space to another, on the
	// bridge's segment.
	addr := echo(t, n, 0)
	medianRTT(t, addr)
	if err := n.In(1, func() error {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}); err != nil {
		t.Errorf("space 1 to space 0: %v", err)
	}

	var cmd *exec.Cmd
	if err := n.In(1, func() error {
		cmd = exec.Command("sleep", "30")
		return cmd.Start()
	}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	space := nsInode(t, filepath.Join(netnsDir, n.Spaces[1].Name))
	if in := nsInode(t, filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "ns/net")); in != space {
		t.Errorf("a process started in space 1 is in namespace %d, not %d", in, space)
	}
	// In's thread ends just after In returns, and no other is left there.
	for deadline := time.Now().Add(time.Second); threadsIn(space) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%d of the test's threads are still in space 1", threadsIn(space))
			break
		}
	}
	if err := n.In(2, func() error { return nil }); err == nil {
		t.Error("In(2) of 2 spaces ran")
	}
}

// nsInode is the inode of the namespace the file at path names.
func nsInode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// threadsIn counts this process's threads in the namespace of inode ino.
func threadsIn(ino uint64) int {
	paths, _ := filepath.Glob("/proc/self/task/*/ns/net")
	count := 0
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Sys().(*syscall.Stat_t).Ino == ino {
			count++
		}
	}
	return count
}

// delay is what TestNetDelay puts on a space: far above a round trip on
// this host (tens of microseconds), and short enough that 20 round trips
// take under a second.
const delay = 20 * time.Millisecond

func TestNetDelay(t *testing.T) {
	needNetns(t)
	t.Parallel()
	n := makeNet(t, NetSpec{Spaces: 2, Delay: []time.Duration{delay}})
	if n.ShaperPID == 0 || !isShaper(n.ShaperPID, n.Dir) {
		t.Fatalf("no shaper running for a delayed space (pid %d)", n.ShaperPID)
	}
	far, near := medianRTT(t, echo(t, n, 0)), medianRTT(t, echo(t, n, 1))
	t.Logf("median round trips: %v to the space %v away, %v to the other", far, delay, near)
	if far < delay {
		t.Errorf("median round trip to a space %v away: %v", delay, far)
	}
	if near >= delay/2 {
		t.Errorf("median round trip to a space without a delay: %v", near)
	}
	// What a delayed space sends goes at a link's pace, not a held
	// socket's: 8 MB from the space to the host take 0.2 s here, 2 s on a
	// host busy with four packages' tests, and held on their way out, as
	// they were first, 29 s.
	if took := sendFrom(t, n, 0, 8<<20); took > 10*time.Second {
		t.Errorf("8 MB from the space %v away to the host took %v", delay, took)
	} else {
		t.Logf("8 MB from the space %v away to the host in %v", delay, took)
	}
	for i, want := range []bool{true, false} {
		rules := inputRules(t, n, i)
		if has := strings.Contains(rules, "NFQUEUE"); has != want {
			t.Errorf("space %d's INPUT rules (want a queue: %v):\n%s", i, want, rules)
		}
		if strings.Contains(rules, "bypass") {
			t.Errorf("space %d's queue is bypassed when the shaper is gone:\n%s", i, rules)
		}
	}
}

// sendFrom sends size bytes from space i to a sink on the host's side
// of the bridge, and says how long they took to arrive whole.
func sendFrom(t *testing.T, n *Net, i, size int) time.Duration {
	t.Helper()
	l, err := net.Listen("tcp", netip.AddrPortFrom(n.Host, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		m, _ := io.Copy(io.Discard, c)
		got <- m
	}()
	var c net.Conn
	if err := n.In(i, func() (err error) {
		c, err = net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := c.SetDeadline(start.Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if m := <-got; m != int64(size) {
		t.Fatalf("the host received %d of %d bytes", m, size)
	}
	return time.Since(start)
}

func inputRules(t *testing.T, n *Net, i int) string {
	t.Helper()
	prog, err := iptables()
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	if err := n.In(i, func() (err error) {
		out, err = exec.Command(prog, "-w", "-S", "INPUT").CombinedOutput()
		return err
	}); err != nil {
		t.Fatalf("iptables -S in space %d: %v: %s", i, err, out)
	}
	return string(out)
}

// TestNetFailsWhole makes iptables fail, the last step, after the
// namespaces, the bridge and the shaper: MakeNet must leave none of them.
func TestNetFailsWhole(t *testing.T) {
	needNetns(t)
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'refused for the test' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "iptables"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	_, err := MakeNet(dir, NetSpec{Spaces: 2, Delay: []time.Duration{0, delay}})
	if err == nil || !strings.Contains(err.Error(), "refused for the test") {
		t.Fatalf("MakeNet with a failing iptables: %v", err)
	}
	t.Log(err)
	abs, _ := filepath.Abs(dir)
	gone(t, planNet(abs, NetSpec{Spaces: 2}))
}

// TestNetMadeByAnotherProcess makes a network in a process that then
// exits, as `dbrig server start` does, and removes it from this one, as
// `dbrig server stop` would: the shaper outlives its maker, and LoadNet
// finds all there is to remove.
func TestNetMadeByAnotherProcess(t *testing.T) {
	if dir := os.Getenv("DBRIG_TEST_MAKE_NET"); dir != "" {
		if _, err := MakeNet(dir, NetSpec{Spaces: 1, Delay: []time.Duration{delay}}); err != nil {
			t.Fatal(err)
		}
		return
	}
	needNetns(t)
	t.Parallel()
	dir := t.TempDir()
	maker := exec.Command(os.Args[0], "-test.run=^TestNetMadeByAnotherProcess$", "-test.count=1")
	maker.Env = append(os.Environ(), "DBRIG_TEST_MAKE_NET="+dir)
	if out, err := maker.CombinedOutput(); err != nil {
		t.Fatalf("making the network in another process: %v\n%s", err, out)
	}
	n, err := LoadNet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !isShaper(n.ShaperPID, n.Dir) {
		t.Errorf("the shaper (pid %d) ended with the process that made the network", n.ShaperPID)
	}
	if rtt := medianRTT(t, echo(t, n, 0)); rtt < delay {
		t.Errorf("median round trip to a space %v away, its maker gone: %v", delay, rtt)
	}
	removed(t, n)
}
