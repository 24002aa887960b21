//go:build linux

package cli_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbrig/dbrig/internal/result"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/server/servertest"
)

// TestServerLostPostgres: a managed PostgreSQL killed 3 s into a run and
// never started again ends the run --lost-after later, long before its
// window would have: exit 1, the result kept and marked with the loss,
// its figures over the seconds the server was up, and no database-side
// figure, for the right reason. In a sweep, such a run is kept apart, not
// counted, and fails the sweep.
func TestServerLostPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a server of its own")
	}
	s, u := managedTPROCC(t, nil)
	out := filepath.Join(t.TempDir(), "r.json")
	kill := func() {
		if _, err := server.Kill(context.Background(), s); err != nil {
			t.Error(err)
		}
	}
	// The kill comes 3 s after the ramp-up began, 2 s into the window.
	o, killed := dbrigActing(t, 3*time.Second, kill, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "1s", "--duration", "60s",
		"--lost-after", "2s", "--json", out)
	if killed.IsZero() {
		t.Fatal("the run ended before the server was killed")
	}
	if took := time.Since(killed); took > 25*time.Second {
		t.Errorf("the run ended %s after the kill, want it ended soon after", took)
	}
	if o.code != 1 {
		t.Errorf("exit %d, want 1: a run that lost its server failed", o.code)
	}
	wantIn(t, "stdout", o.stdout, "FAILED: server lost at ")
	doc, err := result.Read(out)
	if err != nil {
		t.Fatalf("the result was not kept: %v", err)
	}
	l := doc.ServerLost
	if l == nil {
		t.Fatal("the result is not marked server_lost")
	}
	// The kill leaves a write in hand in doubt, a read failed.
	at := killed.Sub(doc.StartedAt).Seconds()
	if l.At < at-0.5 || l.At > at+1.5 || l.Seconds < 2 || l.Errors+l.InDoubt < 1 {
		t.Errorf("server lost %+v, want at about %.1f s (the kill), 2 s or more without a server, and errors or transactions in doubt", *l, at)
	}
	if up := l.At - 1; doc.WindowSeconds < up-0.5 || doc.WindowSeconds > up+0.5 || l.Window < doc.WindowSeconds+l.Seconds-1.5 {
		t.Errorf("window %.1f s of %.1f s, want the %.1f s from its start to the loss", doc.WindowSeconds, l.Window, up)
	}
	var orders int64
	for _, tx := range doc.Transactions {
		if tx.Name == doc.PrimaryTx {
			orders = tx.Count
			if want := float64(tx.Count) * 60 / doc.WindowSeconds; tx.PerMinute != want {
				t.Errorf("%s per minute %.1f, want %.1f, over the seconds the server was up", tx.Name, tx.PerMinute, want)
			}
		}
	}
	m, _ := doc.Metric(doc.PrimaryMetric)
	if m.DB != nil || m.Client == nil || orders == 0 {
		t.Errorf("%s: database %v, client %v, %d orders; want the client's alone", m.Key, m.DB, m.Client, orders)
	}
	if !slices.ContainsFunc(doc.Lines, func(l string) bool { return strings.Contains(l, "the server was lost") }) {
		t.Errorf("summary lines %q, want the database's figure missing because the server was lost", doc.Lines)
	}
	if !slices.ContainsFunc(doc.Notes, func(n string) bool { return strings.HasPrefix(n, "Server lost at") }) {
		t.Errorf("notes %q, want the loss named", doc.Notes)
	}
	// The telemetry, the marks and the loss share the driver's clock,
	// however long the VUs took to open.
	if rec := doc.Telemetry; rec == nil || len(rec.Gaps) != 1 {
		t.Errorf("telemetry %+v, want one gap from the loss to the end", rec)
	} else if rec.Gaps[0].From > l.At+0.2 || rec.Gaps[0].To < l.At+l.Seconds-0.5 {
		t.Errorf("telemetry's gap %+v, want it from the loss (%.2f s) to the end", rec.Gaps[0], l.At)
	} else if w := rec.Window; w[1] > l.At+0.1 || w[1] < l.At-0.1 {
		t.Errorf("telemetry's window %v, want it to end with the throughput's, at the loss (%.2f s)", w, l.At)
	} else if start := l.At - doc.WindowSeconds; math.Abs(w[0]-start) > 0.2 {
		t.Errorf("telemetry's window starts at %.2f s, the throughput's at %.2f s: want one clock", w[0], start)
	}

	// In a sweep, the run that lost its server is kept apart and not
	// counted, and the sweep stops there, failed, to be resumed.
	if err := server.Restart(context.Background(), s, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "lost.yaml")
	body := "name: lost\ntarget: {url: '" + u + "'}\nworkload: tproc-c\nrun: {rampup: 1s, duration: 30s, lost_after: 2s}\nvary:\n  vus: [1, 2]\n"
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(3*time.Second, func() {
		if _, err := server.Kill(context.Background(), s); err != nil {
			t.Error(err)
		}
	})
	sweep := filepath.Join(dir, "out")
	if o := dbrig(t, "sweep", spec, "--out", sweep); o.code != 1 {
		t.Errorf("sweep: exit %d, want 1", o.code)
	}
	if lost, err := result.Read(filepath.Join(sweep, "runs", "p01-r1-lost.json")); err != nil || lost.ServerLost == nil {
		t.Errorf("the sweep's run that lost its server: %v, want it kept and marked", err)
	}
	if sw := readSweep(t, sweep); sw.Done != 0 || sw.Complete || len(sw.Points[0].Runs) > 0 && sw.Points[0].Runs[0] != "" {
		t.Errorf("sweep done %d, complete %v, point 1's runs %q; want nothing counted", sw.Done, sw.Complete, sw.Points[0].Runs)
	}
	// Acknowledge the crash, as dbrig server stop would.
	if err := s.Stop(context.Background()); err != nil && !errors.Is(err, server.ErrCrashed) {
		t.Error(err)
	}
}

// TestStallPostgres: a managed PostgreSQL whose processes are all stopped
// (SIGSTOP) for 3 s mid-window is named a stall of that length, and the
// seconds around it carry latency percentiles that the report draws.
func TestStallPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a server of its own")
	}
	s, u := managedTPROCC(t, nil)
	out := filepath.Join(t.TempDir(), "r.json")
	stop := func() {
		pids := serverTree(t, s)
		signal(t, pids, syscall.SIGSTOP)
		time.Sleep(3 * time.Second)
		signal(t, pids, syscall.SIGCONT)
	}
	// The stop comes 3 s after the ramp-up began, 2 s into the window.
	o, stopped := dbrigActing(t, 3*time.Second, stop, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "1s", "--duration", "8s",
		"--stall-after", "2s", "--json", out)
	if stopped.IsZero() {
		t.Fatal("the run ended before the server was stopped")
	}
	if o.code != 0 {
		t.Errorf("exit %d, want 0: a stall is named, not a failure", o.code)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Stalls) != 1 || doc.ServerLost != nil {
		t.Fatalf("stalls %+v, lost %+v; want one stall and the server kept", doc.Stalls, doc.ServerLost)
	}
	if at, st := stopped.Sub(doc.StartedAt).Seconds(), doc.Stalls[0]; st.At < at-0.5 || st.At > at+0.5 || st.Seconds < 2.7 || st.Seconds > 4 {
		t.Errorf("stall %+v, want from about %.1f s (the stop) for about 3 s", st, at)
	}
	wantIn(t, "stdout", o.stdout, "Stall from ")
	// A window with a stall in it is not steady, whatever its seconds
	// would tell MSER-5, and no ramp-up is advised from it.
	if s := doc.Steady; s == nil || s.Verdict != result.SteadyStalled || s.SuggestedRampup != 0 {
		t.Errorf("steady state %+v, want stalled, with no ramp-up suggested", s)
	}
	wantIn(t, "stdout", o.stdout, fmt.Sprintf("Steady state: not steady: a stall from %.1f s for %.1f s;", doc.Stalls[0].At, doc.Stalls[0].Seconds))
	var slowest float64
	with := 0
	for _, p := range doc.Series {
		if p.Latency != nil {
			with++
			slowest = max(slowest, p.Latency.Max)
		}
	}
	if with < 5 || slowest < 2700 {
		t.Errorf("%d seconds with latency, slowest %.0f ms; want most seconds, and the transactions the stall held", with, slowest)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	mustRun(t, "report", out, "-o", html)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Latency per second", `"spanShade":{"spans":[{"color"`, `"label":"stall"`} {
		wantIn(t, "report", string(page), want)
	}
}

// TestTelemetryFollowsRestartPostgres: after --kill-server-at and its
// restart, the host's side follows the server's new process and the
// database's side reads the new server; the gap between is recorded and
// reported.
func TestTelemetryFollowsRestartPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a server of its own")
	}
	s, u := managedTPROCC(t, nil)
	out := filepath.Join(t.TempDir(), "r.json")
	// The window runs 11 s past the restart: crash recovery, the VUs'
	// reconnects and the stats' first flush took most of 6 s on a busy
	// machine, which left one database sample with commits after the gap.
	mustRun(t, "run", "tproc-c", "--target", u, "--vus", "2", "--rampup", "1s", "--duration", "15s",
		"--kill-server-at", "3s", "--restart-after", "1s", "--server-dir", s.Dir, "--json", out)
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	rec := doc.Telemetry
	if rec == nil || rec.DB == nil || rec.Host == nil {
		t.Fatal("no telemetry recorded")
	}
	if len(rec.Gaps) != 1 {
		t.Fatalf("telemetry gaps %+v, want one around the restart", rec.Gaps)
	}
	g := rec.Gaps[0]
	if g.From > 3.5 || g.To < 4 || g.ServerPID <= 0 || g.ServerPID == rec.Host.Facts.ServerPID {
		t.Errorf("gap %+v (first server pid %d), want one over the kill at 3 s and the restart, with the new server's pid", g, rec.Host.Facts.ServerPID)
	}
	if why, ok := rec.Unavailable["database_counters"]; ok {
		t.Errorf("database counters said unavailable (%s), though read on both sides of the gap", why)
	}
	var serverCPU, counters int
	for _, h := range rec.Host.Samples {
		if h.T > g.To && h.Server != nil {
			serverCPU++
		}
	}
	for _, c := range rec.DB.Samples {
		if c.T > g.To && c.Counters["commits"] > 0 {
			counters++
		}
	}
	if serverCPU < 2 || counters < 2 {
		t.Errorf("after the restart: %d host samples with the server's CPU, %d database samples with commits; want them carried on", serverCPU, counters)
	}
	wantIn(t, "report", mustRun(t, "report", "--text", out).stdout, "Telemetry: no database readings from ")
}

// serverTree is the managed server's postmaster and the processes below it.
func serverTree(t *testing.T, s *postgres.Server) []int {
	t.Helper()
	st, err := s.Status(context.Background())
	if err != nil {
		t.Error(err)
		return nil
	}
	return servertest.Descendants(t, st.PID)
}

func signal(t *testing.T, pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil {
			t.Errorf("%v to %d: %v", sig, pid, err)
		}
	}
}
