//go:build linux

package server

import (
	"net/netip"
	"testing"
)

func TestNetPrefixChoice(t *testing.T) {
	p := netip.MustParsePrefix
	total := uint32(1<<16 + 1<<12 + 1<<8)
	for _, c := range []struct {
		name  string
		start uint32
		used  []netip.Prefix
		want  string
	}{
		{"nothing used", 0, nil, "10.0.0.0/24"},
		{"counts on from start", 258, nil, "10.1.2.0/24"},
		{"skips a /30 inside", 0, []netip.Prefix{p("10.0.0.4/30")}, "10.0.1.0/24"},
		{"skips a wider route", 0, []netip.Prefix{p("10.0.0.0/8")}, "172.16.0.0/24"},
		{"the next range", 1 << 16, nil, "172.16.0.0/24"},
		{"the last /24", total - 1, nil, "192.168.255.0/24"},
		{"wraps", total - 1, []netip.Prefix{p("192.168.0.0/16")}, "10.0.0.0/24"},
	} {
		got, err := choosePrefix(c.start, c.used)
		if err != nil || got.String() != c.want {
			t.Errorf("%s: choosePrefix(%d, %v) = %v, %v; want %s", c.name, c.start, c.used, got, err, c.want)
		}
	}
	if got, err := choosePrefix(0, privateNets); err == nil {
		t.Errorf("every private range used, and choosePrefix chose %v", got)
	}
}
