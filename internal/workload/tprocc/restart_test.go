package tprocc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	// The package is named like this one's runner type.
	"github.com/dbrig/dbrig/internal/dbtarget"
	runpkg "github.com/dbrig/dbrig/internal/runner"
	"github.com/dbrig/dbrig/internal/server"
	"github.com/dbrig/dbrig/internal/server/postgres"
	"github.com/dbrig/dbrig/internal/server/postgres/pgtest"
	"github.com/dbrig/dbrig/internal/workload"
)

// TestServerRestartMidWindow kills the postmaster with SIGKILL in the
// middle of the measured window and starts it again, as a crash and a
// service manager would. The virtual users ride it out; so must the
// database-side marks: NOPM from sum(d_next_o_id), which survives the
// crash, and the transaction counter reported as reset, not as a rate.
func TestServerRestartMidWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a server of its own")
	}
	const (
		vus    = 2
		rampup = 2 * time.Second
		window = 15 * time.Second
		// killAt is into the window, early enough that the restart (3 s
		// idle here, 9 s while other packages' tests ran) is over before
		// the window ends. An end mark that waits for the server stretches
		// the database side's window over time in which nothing could
		// commit, and the two sides' rates then rightly differ.
		killAt = 3 * time.Second
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := pgtest.NewServer(t)
	if err := s.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDB(ctx, "tprocc"); err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, s)
	tg, err := dbtarget.Open(ctx, p.url(t, s.URLFor("tprocc")))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	w := &tprocc{warehouses: 1, loaders: 1, seed: defaultSeed, perWarehouse: terminalsPerWarehouse}
	if _, err := w.Build(ctx, tg, workload.BuildOptions{}); err != nil {
		t.Fatalf("build: %v", err)
	}
	r, err := w.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// The timer starts with the run, and the driver's clock once the
	// virtual users have connected, milliseconds later: the kill lands
	// that much before killAt into the window.
	var restarted struct {
		sync.Mutex
		at, took time.Duration
		err      error
	}
	started := time.Now()
	killer := time.AfterFunc(rampup+killAt, func() {
		at := time.Since(started)
		err := killAndRestart(ctx, s, p)
		restarted.Lock()
		defer restarted.Unlock()
		restarted.at, restarted.took, restarted.err = at, time.Since(started)-at, err
	})
	defer killer.Stop()
	var warnings []string
	doc, err := runpkg.Run(ctx, tg, w, r, runpkg.Options{VUs: vus, Rampup: rampup, Duration: window,
		Warn: func(msg string) { warnings = append(warnings, msg) }})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	restarted.Lock()
	defer restarted.Unlock()
	if restarted.err != nil {
		t.Fatalf("kill and restart: %v", restarted.err)
	}
	if restarted.took == 0 {
		t.Fatal("the run ended before the server was killed and restarted")
	}
	if end := rampup + window; restarted.at+restarted.took > end {
		t.Fatalf("the server took %.1fs to restart, past the window's end: the machine is too busy for this test", restarted.took.Seconds())
	}
	t.Logf("killed %.1fs into the run, up again %.1fs later; window %.1fs\n%s",
		restarted.at.Seconds(), restarted.took.Seconds(), doc.WindowSeconds, strings.Join(doc.Lines, "\n"))

	if len(warnings) > 0 {
		t.Errorf("warnings: %q; want the marks read across the restart", warnings)
	}
	// A write whose commit the kill left unanswered is in doubt, a read
	// failed: either says the kill fell in the window.
	var cut int64
	for _, tx := range doc.Transactions {
		cut += tx.Errors + tx.InDoubt
	}
	if cut == 0 {
		t.Error("no transaction failed or was left in doubt: the kill missed the window")
	}
	nopm, _ := doc.Metric(metricNOPM)
	tpm, _ := doc.Metric(metricTPM)
	if nopm.Client == nil || *nopm.Client <= 0 {
		t.Fatalf("nopm client = %v, want > 0", nopm.Client)
	}
	if nopm.DB == nil {
		t.Fatal("nopm (database side) missing")
	}
	// Each edge can split at most one New-Order per virtual user between
	// the sides, and the kill can take one more per user that committed
	// but never reported back. The rest is the mark reads' timing: the end
	// mark reopens both its connections after the window closes, a few
	// round trips, well inside 2% of the window (300 ms).
	minutes := doc.WindowSeconds / 60
	tolerance := 3*vus/minutes + 0.02**nopm.Client
	if d := math.Abs(*nopm.DB - *nopm.Client); d > tolerance {
		t.Errorf("nopm %.0f (database) and %.0f (client) differ by %.0f, more than %.0f", *nopm.DB, *nopm.Client, d, tolerance)
	}
	if tpm.DB != nil {
		t.Errorf("tpm (database side) = %.0f across a crash that reset the counter, want none", *tpm.DB)
	}
	// The marks name the server as it sees itself, behind the proxy: the
	// same, unless its restart found its port taken and took another.
	why := "reset during the window"
	if len(doc.Marks) != 2 || doc.Marks[0].Server == "" {
		t.Fatalf("marks %+v, want both read, each on the server it names", doc.Marks)
	} else if doc.Marks[0].Server != doc.Marks[1].Server {
		why = "another server, whose counter is its own"
	}
	if !slices.ContainsFunc(doc.Lines, func(l string) bool { return strings.Contains(l, why) }) {
		t.Errorf("summary lines %q do not say the counter was reset (%q)", doc.Lines, why)
	}
}

// killAndRestart kills s's postmaster as a crash would, and starts the
// cluster again behind p, which keeps the address the target knows.
func killAndRestart(ctx context.Context, s *postgres.Server, p *proxy) error {
	b, err := os.ReadFile(filepath.Join(s.Dir, "data", "postmaster.pid"))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		return fmt.Errorf("postmaster.pid: %w", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	// Stop finds the postmaster gone, and forgets it.
	if err := s.Stop(ctx); !errors.Is(err, server.ErrCrashed) {
		return fmt.Errorf("stop after the kill: %v, want %v", err, server.ErrCrashed)
	}
	// The backends leave the shared memory as they notice the postmaster
	// is gone; until the last has, a new postmaster refuses to start.
	for {
		err := s.Start(ctx, nil)
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "shared memory") || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.backend.Store(net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
	return nil
}

// proxy forwards TCP connections to the server's current port: Start picks
// a new one, and a client must find a restarted server where it left it.
type proxy struct {
	ln      net.Listener
	backend atomic.Value // host:port
}

func newProxy(t *testing.T, s *postgres.Server) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	p.backend.Store(net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
	// Connections still open end with the server, which stops after this.
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return p
}

// forward copies both ways until either side closes, then closes both, so
// that a server's death reaches the client as it would directly.
func (p *proxy) forward(c net.Conn) {
	defer c.Close()
	b, err := net.Dial("tcp", p.backend.Load().(string))
	if err != nil {
		return
	}
	defer b.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(b, c); done <- struct{}{} }()
	go func() { io.Copy(c, b); done <- struct{}{} }()
	<-done
}

// url is u with the proxy's address in place of the server's.
func (p *proxy) url(t *testing.T, u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pu.Host = p.ln.Addr().String()
	return pu.String()
}
