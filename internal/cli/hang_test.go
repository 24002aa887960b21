//go:build linux

package cli_test

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// TestFrozenServerPostgres: a server stopped (SIGSTOP, all its processes)
// from 5 s before the window's end, for a minute, ends the run --lost-after
// after it went silent, plus the edge's hold: exit 1, the reason named, the
// result kept, never a window stretched to the server's waking and called
// steady. Before, the run waited for SIGCONT and exited 0 with its orders
// divided by the whole wait.
func TestFrozenServerPostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stops a server of its own")
	}
	s, u := managedTPROCC(t, nil)
	out := filepath.Join(t.TempDir(), "r.json")
	frozen := make(chan []int, 1)
	freeze := func() {
		pids := serverTree(t, s)
		signal(t, pids, syscall.SIGSTOP)
		frozen <- pids
	}
	// However the test ends, the server wakes before it is stopped.
	t.Cleanup(func() {
		select {
		case pids := <-frozen:
			signal(t, pids, syscall.SIGCONT)
		case <-time.After(10 * time.Second):
		}
	})
	// The freeze comes 4 s after the ramp-up began, 3 s into the window.
	o, frozenAt := dbrigActing(t, 4*time.Second, freeze, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "1s", "--duration", "8s",
		"--lost-after", "6s", "--stall-after", "2s", "--json", out)
	if frozenAt.IsZero() {
		t.Fatal("the run ended before the server was frozen")
	}
	// Silent from about 3 s, lost 6 s later; the edge at 9 s holds 2 s.
	if took := time.Since(frozenAt); took > 15*time.Second {
		t.Errorf("the run ended %s after the freeze, want about --lost-after (6 s)", took)
	}
	if o.code != 1 {
		t.Errorf("exit %d, want 1: a run whose server stopped answering failed", o.code)
	}
	wantIn(t, "stdout", o.stdout, "FAILED: server not answering from ")
	doc, err := result.Read(out)
	if err != nil {
		t.Fatalf("the result was not kept: %v", err)
	}
	l := doc.ServerLost
	if l == nil || !l.Silent {
		t.Fatalf("server lost %+v, want it marked lost, silent", l)
	}
	if at := frozenAt.Sub(doc.StartedAt).Seconds(); l.At < at-0.5 || l.At > at+1 || l.Seconds < 5.5 || l.Seconds > 9 {
		t.Errorf("server lost %+v, want silent from about %.1f s (the freeze) for about 6 s", *l, at)
	}
	if doc.WindowSeconds > l.At {
		t.Errorf("window %.1f s, want only the seconds before the server went silent", doc.WindowSeconds)
	}
	if st := doc.Steady; st != nil && st.Verdict == result.SteadyOK {
		t.Errorf("steady state %+v, want a window that lost its server not called steady", *st)
	}
}

// TestHalfOpenPostgres: connections that a proxy leaves half-open (it
// takes what the client sends and passes nothing on, either way) end the
// run within --lost-after of the cut, the result written; one SIGTERM
// after the cut ends the run within the same bound, its result written,
// and a second one at once. Before, a 22 s run was still running past
// 200 s, SIGTERM did not stop it, and a second signal quit with no result.
func TestHalfOpenPostgres(t *testing.T) {
	direct := halfOpenDB(t, pgTPROCC)
	t.Run("lost after", func(t *testing.T) {
		t.Parallel()
		halfOpenLost(t, direct)
	})

	bin := buildBinary(t)
	for _, signals := range []int{1, 2} {
		t.Run(strings.Repeat("SIGTERM ", signals), func(t *testing.T) {
			t.Parallel()
			u, p := through(t, direct)
			out := filepath.Join(t.TempDir(), "r.json")
			stderr, exited, cmd := startSweep(t, bin, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "1s",
				"--duration", "60s", "--lost-after", "6s", "--stall-after", "1s", "--json", out)
			waitFor(t, stderr, exited, "measure  ", 0)
			p.Freeze()
			cut := time.Now()
			time.Sleep(time.Second)
			for range signals {
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				time.Sleep(300 * time.Millisecond)
			}
			signalled := time.Now()
			// One signal: the end edge waits out --lost-after from the
			// cut; two: nothing more is waited for.
			bound := 6*time.Second + 10*time.Second - time.Since(cut)
			if signals == 2 {
				bound = 5 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			select {
			case <-exited:
			case <-ctx.Done():
				t.Fatalf("dbrig still running %s after the last SIGTERM:\n%s", bound, stderr)
			}
			t.Logf("exited %.1f s after the last signal", time.Since(signalled).Seconds())
			if code := cmd.ProcessState.ExitCode(); code == 0 {
				t.Errorf("exit 0, want a failure or an interrupt's code")
			}
			doc, err := result.Read(out)
			if err != nil {
				t.Fatalf("the result was not written: %v", err)
			}
			if !doc.Interrupted && doc.ServerLost == nil {
				t.Errorf("the result is marked neither interrupted nor lost")
			}
		})
	}
}

// TestHalfOpenMariaDB: on MariaDB as on PostgreSQL, connections a proxy
// leaves half-open end the run within --lost-after of the cut.
func TestHalfOpenMariaDB(t *testing.T) {
	halfOpenLost(t, halfOpenDB(t, mariaTPROCC))
}

// halfOpenDB is the tproc-c database built gives a test, in parallel with
// others, that cuts a proxy to it.
func halfOpenDB(t *testing.T, built func(*testing.T) string) string {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs through a proxy that it cuts")
	}
	return built(t)
}

// through is the URL direct, by a proxy the test can freeze.
func through(t *testing.T, direct string) (string, *servertest.Proxy) {
	pu, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	p := servertest.NewProxy(t, pu.Host)
	pu.Host = p.Addr
	return pu.String(), p
}

// halfOpenLost runs tproc-c on the database at direct through a proxy that
// goes half-open 2 s into the window: the run ends about --lost-after later, failed,
// its server lost as silent, the result kept.
func halfOpenLost(t *testing.T, direct string) {
	u, p := through(t, direct)
	out := filepath.Join(t.TempDir(), "r.json")
	// The cut comes 3 s after the ramp-up began, 2 s into the window.
	o, cut := dbrigActing(t, 3*time.Second, p.Freeze, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "1s", "--duration", "60s",
		"--lost-after", "4s", "--stall-after", "1s", "--json", out)
	if cut.IsZero() {
		t.Fatal("the run ended before the proxy was cut")
	}
	if took := time.Since(cut); took > 12*time.Second {
		t.Errorf("the run ended %s after the cut, want about --lost-after (4 s)", took)
	}
	if o.code != 1 {
		t.Errorf("exit %d, want 1", o.code)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatalf("the result was not kept: %v", err)
	}
	at := cut.Sub(doc.StartedAt).Seconds()
	if l := doc.ServerLost; l == nil || !l.Silent || l.At < at-0.5 || l.At > at+1 {
		t.Errorf("server lost %+v, want silent from the cut at about %.1f s", l, at)
	}
}
