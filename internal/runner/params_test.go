package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/dbrig/dbrig/internal/exitcode"
)

func TestConnectionsRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		vus, connections, beside int
		want                     string
	}{
		"more than the VUs": {vus: 30, connections: 40, want: "--connections 40 is more than --vus 30"},
		"negative":          {vus: 30, connections: -1, want: "--connections must not be negative"},
		"beside --with":     {vus: 30, connections: 3, beside: 2, want: "--connections does not run beside --with"},
	} {
		o := Defaults()
		o.VUs, o.Connections, o.Beside = c.vus, c.connections, c.beside
		err := o.Validate(false)
		var u *exitcode.UserError
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || !errors.As(err, &u) {
			t.Errorf("%s: err = %v, want one line of exit 2 with %q", name, err, c.want)
		}
	}
	o := Defaults()
	o.VUs, o.Connections = 30, 30
	if err := o.Validate(false); err != nil {
		t.Errorf("30 connections for 30 VUs: %v", err)
	}
	// A run of a fixed amount of work takes no --connections at all.
	o.Connections = 40
	if err := o.Validate(true); err != nil {
		t.Errorf("fixed work: %v", err)
	}
	// A sweep spec sets one key at a time, on the defaults' 4 VUs.
	spec := Defaults()
	if err := spec.Set("connections", "10"); err != nil {
		t.Errorf("spec value alone: %v", err)
	}
}

func TestClientProcsCountSessions(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	o := Options{VUs: 10000, Connections: 1}
	if n := o.clientProcs(); n != 1 {
		t.Errorf("10,000 terminals on 1 session: %d Ps, want 1", n)
	}
}

// TestLeastDurations: a duration below its least, 0s too, is refused, in
// a sweep spec's keys as on the command line: 0s once silently meant the
// default (30 s to give a server up), while -1s was refused.
func TestLeastDurations(t *testing.T) {
	for _, key := range []string{"lost_after", "stall_after"} {
		for _, v := range []string{"0s", "-1s", "999ms"} {
			o := Defaults()
			if err := o.Set(key, v); err == nil || !strings.Contains(err.Error(), "must be at least 1s, got "+v) {
				t.Errorf("%s: %s: %v, want it refused", key, v, err)
			}
		}
		o := Defaults()
		if err := o.Set(key, "1s"); err != nil {
			t.Errorf("%s: 1s: %v", key, err)
		}
	}
}
